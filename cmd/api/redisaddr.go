package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Redis addresses: every address setting (REDIS_ADDR, REDIS_CLUSTER_ADDRS, REDLOCK_ADDRS)
// takes host:port, or a redis://[user:password@]host:port[/db] URL, or the same with rediss://
// for TLS. URLs are parsed by go-redis (redis.ParseURL). REDIS_USERNAME and REDIS_PASSWORD
// apply to every address whose URL holds no credentials of its own.
//
// Passwords never reach a log line or an error: redisNode.String leaves them out, and the
// errors below quote an address only when it has no '@', so cannot hold one.

// badAddr is the complaint about an address that is neither form.
const badAddr = "want host:port, or a redis:// or rediss:// URL"

// redisNode is one Redis server as an address setting names it: where it is and how to log in.
type redisNode struct {
	addr     string // host:port
	username string // ACL user (Redis 6 and later); empty: the default user
	password string
	db       int
	tls      bool // rediss://: TLS, the server's certificate verified against the system roots
}

// String is the node as a log line shows it: host:port, with the scheme when it is TLS or the
// database is not 0, and never the credentials.
func (n redisNode) String() string {
	switch {
	case n.tls && n.db != 0:
		return "rediss://" + n.addr + "/" + strconv.Itoa(n.db)
	case n.tls:
		return "rediss://" + n.addr
	case n.db != 0:
		return "redis://" + n.addr + "/" + strconv.Itoa(n.db)
	}
	return n.addr
}

// tlsConfig is nil without TLS. It leaves ServerName empty, so crypto/tls checks each
// certificate against the host that connection dialled: for a cluster, each node's own address.
// The roots are the system's; Go reads SSL_CERT_FILE and SSL_CERT_DIR for a private CA.
func (n redisNode) tlsConfig() *tls.Config {
	if !n.tls {
		return nil
	}
	return &tls.Config{MinVersion: tls.VersionTLS12}
}

// parseRedisNode parses one address. A URL's user and password, when it has either, win over
// user and password (REDIS_USERNAME, REDIS_PASSWORD), which apply otherwise.
func parseRedisNode(s, user, password string) (redisNode, error) {
	if !strings.Contains(s, "://") {
		if _, port, err := net.SplitHostPort(s); err != nil || port == "" {
			return redisNode{}, errors.New(badAddr)
		}
		return redisNode{addr: s, username: user, password: password}, nil
	}
	opt, err := parseRedisURL(s)
	if err != nil {
		return redisNode{}, err
	}
	n := redisNode{addr: opt.Addr, username: user, password: password, db: opt.DB, tls: opt.TLSConfig != nil}
	if opt.Username != "" || opt.Password != "" {
		n.username, n.password = opt.Username, opt.Password
	}
	return n, nil
}

// parseRedisURL checks what go-redis would take silently or report with the password in its
// message, then lets redis.ParseURL parse s.
func parseRedisURL(s string) (*redis.Options, error) {
	u, err := url.Parse(s)
	if uerr := (*url.Error)(nil); errors.As(err, &uerr) && !strings.Contains(s, "@") {
		return nil, uerr.Err // no '@', no password: what url.Parse found is safe to show
	}
	if err != nil || (u.User == nil && strings.Contains(s, "@")) {
		// url.Parse's message quotes the text, password included: say nothing of it.
		return nil, errors.New("not a valid URL: check the host and port, and percent-encode the characters @ : / ? # , % of a user name or password")
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, errors.New(badAddr)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		// Options in the URL would fight the client settings cmd/api chose (see redis.go).
		return nil, errors.New("URL options (?...) are not supported: give host, port, credentials and /db only")
	}
	opt, err := redis.ParseURL(s)
	if err != nil {
		return nil, err // about the port or the path: the password is in u.User, not quoted
	}
	if host, _, _ := net.SplitHostPort(opt.Addr); strings.Contains(host, ",") ||
		(strings.Contains(host, ":") && net.ParseIP(host) == nil) {
		return nil, fmt.Errorf("host %q: want one host name or IP address", host)
	}
	return opt, nil
}

// parseRedisList parses a comma-separated list of addresses of the setting name.
func parseRedisList(name, v, user, password string) ([]redisNode, error) {
	var nodes []redisNode
	for i, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		n, err := parseRedisNode(s, user, password)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where(name, i+1, s), err)
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// where names entry i (from 1; 0 for a setting that is one address) of the setting name in an
// error. It quotes the entry only when the entry has no '@', so holds no password.
func where(name string, i int, entry string) string {
	if i > 0 {
		name += " entry " + strconv.Itoa(i)
	}
	if strings.Contains(entry, "@") {
		return name
	}
	return fmt.Sprintf("%s %q", name, entry)
}

// checkCluster reports what one cluster client cannot do: it logs in to every node with the
// same user and password, speaks TLS to all of them or none, and a cluster has database 0 only.
func checkCluster(name string, nodes []redisNode) []error {
	var errs []error
	for i, n := range nodes {
		if n.db != 0 {
			errs = append(errs, fmt.Errorf("%s entry %d: a Redis Cluster has database 0 only", name, i+1))
		}
		first := nodes[0]
		if n.username != first.username || n.password != first.password || n.tls != first.tls {
			errs = append(errs, fmt.Errorf("%s entry %d: the nodes of one cluster take the user, password and scheme of entry 1",
				name, i+1))
		}
	}
	return errs
}

// addrs returns the nodes' host:port addresses.
func addrs(nodes []redisNode) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.addr
	}
	return out
}

// joinNodes is the nodes as a log line shows them, comma-separated.
func joinNodes(nodes []redisNode) string {
	s := make([]string, len(nodes))
	for i, n := range nodes {
		s[i] = n.String()
	}
	return strings.Join(s, ",")
}

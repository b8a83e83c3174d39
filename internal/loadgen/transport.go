package loadgen

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/seckill/seckill/internal/api/client"
)

// Deployment is how loadtest reaches a deployment other than the bundled one: headers and
// client TLS on every request it makes (purchases, setup, lookups, audits, /readyz, /metrics),
// and an existing product to buy. The zero value is the bundled service: no header, Go's TLS
// defaults (the system's roots), a fresh product per attack.
type Deployment struct {
	// Header is added to every request, each name unless the request already carries it (the
	// admin routes' Authorization, a purchase's Content-Type). "Host" sets the request's host.
	Header http.Header
	// TLS configures HTTPS connections; nil: Go's defaults. TLSFiles.Config builds one.
	TLS *tls.Config
	// Product, when not 0, is the product run buys instead of creating one (see product).
	Product int64
	// Tokens, when set, gives each buyer's bearer token, sent on every request made for a
	// buyer (purchases, payments, cancels, lookups): for an API with buyer identity on.
	Tokens *Tokens
}

// TLSFiles names the files of the client's TLS: -tls-ca, -tls-cert and -tls-key, and the
// name the server's certificate must hold, -tls-server-name.
type TLSFiles struct {
	CA, Cert, Key, ServerName string
}

// Config reads the files of f into a TLS configuration: nil when f names nothing. The CA
// replaces the system's roots; a client certificate needs both Cert and Key.
func (f TLSFiles) Config() (*tls.Config, error) {
	if f == (TLSFiles{}) {
		return nil, nil
	}
	c := &tls.Config{ServerName: f.ServerName, MinVersion: tls.VersionTLS12}
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, fmt.Errorf("-tls-ca: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-tls-ca %s: no PEM certificate in it", f.CA)
		}
	}
	switch {
	case (f.Cert == "") != (f.Key == ""):
		return nil, errors.New("-tls-cert and -tls-key: a client certificate needs both, or neither")
	case f.Cert != "":
		pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("-tls-cert %s, -tls-key %s: %w", f.Cert, f.Key, err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// ParseHeader reads one -header value, "Name: value", refusing a name that is not an HTTP
// token, a value with a control character, and the headers Go's client writes itself. Its
// errors name the header but never repeat its value, which may be a credential.
func ParseHeader(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	switch {
	case !ok:
		return "", "", errors.New("want 'Name: value', and found no colon")
	case !isToken(name):
		return "", "", errors.New("the name before the colon is not a header name (letters, digits and !#$%&'*+-.^_`|~)")
	case !isFieldValue(value):
		return "", "", fmt.Errorf("the value of %s holds a control character", name)
	}
	if slices.Contains([]string{"Content-Length", "Transfer-Encoding", "Connection"}, http.CanonicalHeaderKey(name)) {
		return "", "", fmt.Errorf("%s is written by the HTTP client itself", http.CanonicalHeaderKey(name))
	}
	return http.CanonicalHeaderKey(name), value, nil
}

// isToken reports whether s is an HTTP token (RFC 9110, 5.6.2), as a header's name must be.
func isToken(s string) bool {
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return s != ""
}

// isFieldValue reports whether s may be a header's value: no control character but tab.
func isFieldValue(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f })
}

// HTTPClient returns the client of every request loadtest sends: d's headers on each
// request, d's TLS on each connection, timeout per request, up to conns idle keep-alive
// connections per host (0: Go's default). wrap, when not nil, wraps its transport below the
// headers (the -check's recording transport). It is safe for concurrent use.
func (d Deployment) HTTPClient(conns int, timeout time.Duration, wrap func(http.RoundTripper) http.RoundTripper) *http.Client {
	dialer := &net.Dialer{KeepAlive: 30 * time.Second}
	var rt http.RoundTripper = &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         dialer.DialContext,
		TLSClientConfig:     d.TLS.Clone(),
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
	}
	if wrap != nil {
		rt = wrap(rt)
	}
	if len(d.Header) > 0 {
		rt = headerTransport{header: d.Header, next: rt}
	}
	return &http.Client{Timeout: timeout, Transport: rt}
}

// apiClient returns the typed client of the API at base, sending through d's HTTP client
// with the admin token on the admin routes.
func (d Deployment) apiClient(base, adminToken string) *client.Client {
	opts := &client.Options{AdminToken: adminToken, HTTPClient: d.HTTPClient(0, client.DefaultTimeout, nil)}
	if d.Tokens != nil {
		opts.BuyerToken = d.Tokens.Token
	}
	return client.New(base, opts)
}

// attackClient is the client of an attack's purchases, with conns idle connections per host
// as vegeta's attacker would keep; history, when not nil, records each request's buyer
// (-check). It replaces the attacker's own client: vegeta lets a caller wrap nothing.
func (d Deployment) attackClient(conns int, timeout time.Duration, history *purchaseLog) *http.Client {
	var wrap func(http.RoundTripper) http.RoundTripper
	if history != nil {
		wrap = func(next http.RoundTripper) http.RoundTripper { return recordingTransport{log: history, next: next} }
	}
	return d.HTTPClient(conns, timeout, wrap)
}

// headerTransport adds header to each request that does not carry the name already.
type headerTransport struct {
	header http.Header
	next   http.RoundTripper
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context()) // a RoundTripper must not change its request
	for name, values := range t.header {
		switch {
		case name == "Host":
			req.Host = values[0]
		case len(req.Header.Values(name)) == 0:
			req.Header[name] = values
		}
	}
	return t.next.RoundTrip(req)
}

// handshakeFailed reports whether err is a TLS handshake that failed for good: the
// server's certificate not verified, or the server refusing ours (an alert such as
// "certificate required").
func handshakeFailed(err error) bool {
	var verify *tls.CertificateVerificationError
	var op *net.OpError // crypto/tls reports the peer's alert as a "remote error"
	return errors.As(err, &verify) || errors.As(err, &op) && op.Op == "remote error"
}

// describe says, in one line for the report, what d changes; empty for the zero value.
func (d Deployment) describe() string {
	var parts []string
	if len(d.Header) > 0 {
		names := make([]string, 0, len(d.Header))
		for n := range d.Header {
			names = append(names, n)
		}
		slices.Sort(names)
		parts = append(parts, "headers "+strings.Join(names, ", ")+" (values not shown)")
	}
	if c := d.TLS; c != nil {
		tlsDesc := "client TLS:"
		if c.RootCAs != nil {
			tlsDesc += " own CA"
		} else {
			tlsDesc += " system roots"
		}
		if len(c.Certificates) > 0 {
			tlsDesc += ", client certificate"
		}
		if c.ServerName != "" {
			tlsDesc += ", server name " + c.ServerName
		}
		parts = append(parts, tlsDesc)
	}
	return strings.Join(parts, "; ")
}

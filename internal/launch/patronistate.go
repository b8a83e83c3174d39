package launch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// What a caller asks of a running Patroni cluster: which node is the primary, whether the
// standbys stream from it, a planned switchover.

// Primary returns the node that is the primary now: the only one whose REST API answers
// GET /primary with 200 (Patroni's check that it holds the leader key and runs as the
// primary). It returns an error when none does, or more than one.
func (c *Patroni) Primary() (*PatroniNode, error) {
	var found []*PatroniNode
	for _, n := range c.Nodes {
		if n.IsPrimary() {
			found = append(found, n)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, errors.New("no Patroni node is the primary")
	}
	return nil, fmt.Errorf("%d Patroni nodes say they are the primary", len(found))
}

// WaitPrimary waits up to d until one node, other than not (nil: any), is the primary
// (Primary) and takes a read-write connection, and returns it.
func (c *Patroni) WaitPrimary(d time.Duration, not *PatroniNode) (*PatroniNode, error) {
	deadline := time.Now().Add(d)
	for {
		p, err := c.Primary()
		if err == nil && p != not {
			if err = p.readWrite(); err == nil {
				return p, nil
			}
		} else if err == nil {
			err = fmt.Errorf("%s is still the primary", p.Name)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no new primary within %v: %w%s", d, err, c.logTails(15))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// WaitReplicating waits up to d until the primary has a standby streaming from it for every
// other node that runs: in synchronous_mode, one of them synchronous, in PostgreSQL and in
// etcd. Patroni promotes only a standby that etcd records as synchronous (its /sync key),
// which it writes a second or two after PostgreSQL made the standby synchronous: a primary
// lost in between leaves the cluster without one.
func (c *Patroni) WaitReplicating(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		err := c.replicating()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not replicating within %v: %w%s", d, err, c.logTails(15))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *Patroni) replicating() error {
	p, err := c.Primary()
	if err != nil {
		return err
	}
	var names []string
	for _, n := range c.Nodes {
		if n != p && n.Running() {
			names = append(names, "'"+strings.ReplaceAll(n.Name, "'", "''")+"'")
		}
	}
	want := len(names)
	names = append(names, "''")
	// Patroni names each standby's connection after its member; pg_basebackup's WAL stream,
	// while a standby is being made, is "streaming" too and must not count.
	var streaming, sync int
	err = p.query(`SELECT count(*), count(*) FILTER (WHERE sync_state = 'sync') FROM pg_stat_replication
		WHERE state = 'streaming' AND application_name IN (`+strings.Join(names, ", ")+`)`, &streaming, &sync)
	switch {
	case err != nil:
		return err
	case streaming < want:
		return fmt.Errorf("%d of %d standbys stream from %s", streaming, want, p.Name)
	case !c.Async && want > 0 && sync == 0:
		return fmt.Errorf("no standby of %s is synchronous yet", p.Name)
	case !c.Async && want > 0:
		return p.syncRecorded()
	}
	return nil
}

// syncRecorded checks that the cluster, as the node's REST API reads it from etcd (GET
// /cluster), has a synchronous standby that runs.
func (n *PatroniNode) syncRecorded() error {
	status, body, err := n.rest("GET", "/cluster", "", 2*time.Second)
	if err != nil || status != 200 {
		return fmt.Errorf("GET %s/cluster: %d %v", n.API, status, err)
	}
	var cluster struct {
		Members []struct{ Name, Role, State string }
	}
	if err := json.Unmarshal([]byte(body), &cluster); err != nil {
		return fmt.Errorf("GET %s/cluster: %w", n.API, err)
	}
	for _, m := range cluster.Members {
		if m.Role == "sync_standby" && (m.State == "running" || m.State == "streaming") {
			return nil
		}
	}
	return fmt.Errorf("etcd records no synchronous standby of %s yet: %s", n.Name, body)
}

// Switchover asks the primary's REST API for a planned switchover to the standby to
// (POST /switchover), which Patroni performs before it answers: the primary is shut down
// once its standby has every transaction, and the standby promoted.
func (c *Patroni) Switchover(to *PatroniNode) error {
	p, err := c.Primary()
	if err != nil {
		return fmt.Errorf("switchover to %s: %w", to.Name, err)
	}
	body := fmt.Sprintf(`{"leader": %q, "candidate": %q}`, p.Name, to.Name)
	status, reply, err := p.rest("POST", "/switchover", body, 60*time.Second)
	if err == nil && status != 200 {
		err = fmt.Errorf("%d %s", status, reply)
	}
	if err != nil {
		return fmt.Errorf("switchover from %s to %s: %w", p.Name, to.Name, err)
	}
	return nil
}

// logTails is the last n lines of each node's log, for an error.
func (c *Patroni) logTails(n int) string {
	var b strings.Builder
	for _, node := range c.Nodes {
		fmt.Fprintf(&b, "\n%s (Patroni and PostgreSQL) log, last lines:\n%s", node.Name, node.log.Tail(n))
	}
	return b.String()
}

// readWrite checks that the node takes a read-write connection within 2 s.
func (n *PatroniNode) readWrite() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, n.cluster.dsn(n.Addr, "&target_session_attrs=read-write"))
	if err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	return conn.Close(ctx)
}

// query runs sql on the node (5 s at most) and scans its one row into dest.
func (n *PatroniNode) query(sql string, dest ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, n.DSN())
	if err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, sql).Scan(dest...); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	return nil
}

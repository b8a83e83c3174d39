package procs

import (
	"io"
	"net"
	"testing"
	"time"
)

// serverEnd is the server's end of one connection through a forwarder: ended receives when
// the forwarder closed it.
type serverEnd struct {
	net.Conn
	ended chan time.Time
}

// endServer listens on loopback, hands each connection it accepts to conns, echoes what it
// sends, and reports on its ended when the connection ended, until the test ends.
func endServer(t *testing.T, conns chan<- serverEnd) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e := serverEnd{Conn: c, ended: make(chan time.Time, 1)}
			conns <- e
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
				e.ended <- time.Now()
			}()
		}
	}()
	return ln.Addr().String()
}

// TestForwardProbingEndsWhatTheCutKilled: across a partition, a probing forwarder ends the
// server's end of a connection within about its UserTimeout, as a server's own keepalives
// and user timeout would: an idle connection (its keepalives go unanswered) and one on which
// the server sent data after the cut (unacknowledged, which keepalives alone never end). A
// plain forwarder keeps the server's connections open for as long as the partition lasts.
// Once healed, the process's connections through the probing forwarder are reset: the
// sessions they stood for are gone.
func TestForwardProbingEndsWhatTheCutKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("makes a network namespace; skipped with -short")
	}
	t.Parallel()
	ns := startNetns(t)
	const userTimeout = 2 * time.Second
	probedConns, plainConns := make(chan serverEnd, 2), make(chan serverEnd, 1)
	probed, err := ns.ForwardProbing(endServer(t, probedConns), Probe{
		KeepAlive: net.KeepAliveConfig{Idle: time.Second, Interval: time.Second, Count: 1}, UserTimeout: userTimeout})
	if err != nil {
		t.Fatal(err)
	}
	plain := forward(t, ns, endServer(t, plainConns))
	var inside []net.Conn // idle and in flight through the probing forwarder, then the plain one
	var ends []serverEnd
	for _, addr := range []string{probed, probed, plain} {
		c, err := ns.Dial(addr, 2*time.Second)
		if err != nil {
			t.Fatalf("dial %s from inside: %v", addr, err)
		}
		defer c.Close()
		if err := echo(c, "before", 2*time.Second); err != nil {
			t.Fatalf("before the partition: %v", err)
		}
		inside = append(inside, c)
		if addr == probed {
			ends = append(ends, <-probedConns)
		} else {
			ends = append(ends, <-plainConns)
		}
	}
	if err := ns.Partition(probed, plain); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	if _, err := io.WriteString(ends[1], "in flight"); err != nil {
		t.Fatal(err)
	}
	for i, what := range []string{"an idle connection", "a connection with data in flight"} {
		select {
		case at := <-ends[i].ended:
			t.Logf("%s: the probing forwarder ended the server's end %v after the cut", what, at.Sub(cut).Round(time.Millisecond))
		case <-time.After(userTimeout + 2*time.Second):
			t.Errorf("%s: the probing forwarder kept the server's end %v into the partition", what, userTimeout+2*time.Second)
		}
	}
	select {
	case <-ends[2].ended:
		t.Error("the plain forwarder ended the server's end during the partition")
	default:
	}
	if err := ns.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := echo(inside[0], "after", 5*time.Second); err == nil || timedOut(err) {
		t.Errorf("after healing, on the probed connection: %v, want it reset", err)
	}
	if err := echo(inside[2], "after", 5*time.Second); err != nil {
		t.Errorf("after healing, on the plain connection: %v", err)
	}
}

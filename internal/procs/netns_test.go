package procs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/seckill/seckill/internal/testenv/missing"
)

// startNetns is StartNetns for a test, which it skips where namespaces cannot be made; the
// namespace is removed when the test ends.
func startNetns(t *testing.T) *Netns {
	t.Helper()
	ns, err := StartNetns(t.Name())
	if errors.Is(err, ErrUnavailable) {
		missing.Skip(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ns.Close(); err != nil {
			t.Error(err)
		}
	})
	return ns
}

// forward is ns.Forward(target), failing the test on error.
func forward(t *testing.T, ns *Netns, target string) string {
	t.Helper()
	addr, err := ns.Forward(target)
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// echoServer listens on loopback and echoes what each connection sends, until the test ends.
func echoServer(t *testing.T) string {
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
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// echo sends msg on c and reads it back within d.
func echo(c net.Conn, msg string, d time.Duration) error {
	_ = c.SetDeadline(time.Now().Add(d))
	if _, err := io.WriteString(c, msg); err != nil {
		return err
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		return err
	}
	if string(got) != msg {
		return fmt.Errorf("echoed %q, want %q", got, msg)
	}
	return nil
}

// timedOut reports whether err is a timeout, not a refusal or a reset: what a silent drop
// gives.
func timedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() &&
		!errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ECONNRESET)
}

// TestNetnsPartitionIsSilent: a connection from inside the namespace through a forwarder
// works; once partitioned from that forwarder, a read on it and a new connection time out
// (no RST, no ICMP: nothing is refused or reset), while another forwarder stays reachable;
// once healed, TCP delivers what was sent meanwhile, and new connections work again.
func TestNetnsPartitionIsSilent(t *testing.T) {
	if testing.Short() {
		t.Skip("makes a network namespace; skipped with -short")
	}
	t.Parallel()
	ns := startNetns(t)
	cut, kept := forward(t, ns, echoServer(t)), forward(t, ns, echoServer(t))
	c, err := ns.Dial(cut, 2*time.Second)
	if err != nil {
		t.Fatalf("dial %s from inside: %v", cut, err)
	}
	defer c.Close()
	if err := echo(c, "before", 2*time.Second); err != nil {
		t.Fatalf("before the partition: %v", err)
	}

	if err := ns.Partition(cut); err != nil {
		t.Fatal(err)
	}
	if err := echo(c, "during", time.Second); !timedOut(err) {
		t.Errorf("a read on a partitioned connection: %v, want a timeout", err)
	}
	start := time.Now()
	if c2, err := ns.Dial(cut, time.Second); !timedOut(err) {
		t.Errorf("a new connection across the partition: %v, want a timeout", err)
		if c2 != nil {
			c2.Close()
		}
	}
	t.Logf("a connect across the partition gave up after %v", time.Since(start).Round(time.Millisecond))
	k, err := ns.Dial(kept, 2*time.Second)
	if err != nil {
		t.Fatalf("the forwarder not partitioned from: %v", err)
	}
	defer k.Close()
	if err := echo(k, "kept", 2*time.Second); err != nil {
		t.Errorf("the forwarder not partitioned from: %v", err)
	}

	if err := ns.Heal(); err != nil {
		t.Fatal(err)
	}
	// "during" was sent and its reading timed out; TCP retransmits it, and its echo comes.
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got := make([]byte, len("during"))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "during" {
		t.Errorf("after healing, the echo of what was sent during the partition: %q, %v", got, err)
	}
	if err := echo(c, "after", 5*time.Second); err != nil {
		t.Errorf("after healing, on the same connection: %v", err)
	}
	c3, err := ns.Dial(cut, 2*time.Second)
	if err != nil {
		t.Fatalf("a new connection after healing: %v", err)
	}
	defer c3.Close()
	if err := echo(c3, "new", 2*time.Second); err != nil {
		t.Errorf("a new connection after healing: %v", err)
	}
}

// childEnv marks the run of this test binary that TestNetnsDiesWithTheTest starts.
const childEnv = "LAUNCH_NETNS_CHILD"

// TestNetnsDiesWithTheTest: a test binary that starts a process in a namespace (through ip
// netns exec, as LaunchAPIIn does) and is then killed before its cleanups run takes that
// process with it (Pdeathsig survives ip's exec), and the next StartNetns removes the
// namespace and the veth it left behind.
func TestNetnsDiesWithTheTest(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		netnsChild(t)
		return
	}
	if testing.Short() {
		t.Skip("makes a network namespace; skipped with -short")
	}
	t.Parallel()
	if err := NetnsSupported(); err != nil {
		missing.Skip(t, err.Error())
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNetnsDiesWithTheTest$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.Output()
	m := regexp.MustCompile(`child: pid (\d+) exe (\S+) netns (\S+) veth (\S+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("the child said (%v):\n%s", err, out)
	}
	pid, _ := strconv.Atoi(m[1])
	name, dev := m[3], m[4]
	if filepath.Base(m[2]) != "sleep" {
		t.Errorf("the process run through ip netns exec is %s, want sleep: ip forked instead of exec", m[2])
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("pid %d, started in %s, still runs 10s after its test binary was killed", pid, name)
		}
		time.Sleep(10 * time.Millisecond)
	}

	unlock, err := lockNetns()
	if err != nil {
		t.Fatal(err)
	}
	err = sweepNetns(sbin("ip"))
	unlock()
	if err != nil {
		t.Error(err)
	}
	if _, err := os.Stat("/run/netns/" + name); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("namespace %s left behind by a dead test binary: %v", name, err)
	}
	if err := run(nil, sbin("ip"), "link", "show", dev); err == nil {
		t.Errorf("veth %s left behind by a dead test binary", dev)
	}
}

// alive reports whether process pid runs (a zombie does not).
func alive(pid int) bool {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return false
	}
	s, err := p.Stat()
	return err == nil && s.State != "Z"
}

// netnsChild is the child's side of TestNetnsDiesWithTheTest: it starts sleep in a namespace,
// says what it made, and kills itself, leaving it all behind.
func netnsChild(t *testing.T) {
	ns := startNetns(t)
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	cmd, bin, err := ns.command(sleep, "60")
	if err != nil {
		t.Fatal(err)
	}
	p, err := StartProcess(cmd, &Buffer{})
	bin.Close()
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	var exe string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		// ip execs sleep once it entered the namespace; until then the process is ip.
		if exe, _ = os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); filepath.Base(exe) == "sleep" {
			break
		}
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "child: pid %d exe %s netns %s veth %s\n", pid, strings.ReplaceAll(exe, " ", "_"), ns.Name, ns.hostDev)
	w.Flush()
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL) // no cleanup runs
}

package procs

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// What a caller does with a namespace of its own (netns.go): partition it and heal it, dial out
// of it, run a process in it.

// Partition silently drops every packet between the namespace and addrs, both ways, until Heal.
func (n *Netns) Partition(addrs ...string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cut = append(n.cut, addrs...)
	var rules [2]strings.Builder // to them, from them
	for _, a := range n.cut {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			return fmt.Errorf("partition from %q: %w", a, err)
		}
		fmt.Fprintf(&rules[0], "\t\tip daddr %s tcp dport %s drop\n", host, port)
		fmt.Fprintf(&rules[1], "\t\tip saddr %s tcp sport %s drop\n", host, port)
	}
	families := []string{"netdev", "inet"}
	if n.family != "" {
		families = []string{n.family}
	}
	var errs []error
	for _, family := range families {
		err := n.nftables(partitionRules(family, rules[0].String(), rules[1].String()))
		if err == nil {
			n.family = family
			return nil
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("partition %s from %v: %w", n.Name, addrs, errors.Join(errs...))
}

// partitionRules is the nftables script that replaces the partition table with one of the
// family (netdev: at the veth end; inet: at the namespace's IP stack) with the rules to drop
// what goes out and what comes in.
func partitionRules(family, out, in string) string {
	hooks := [2]string{"output", "input"}
	if family == "netdev" {
		hooks = [2]string{`egress device "` + insideDev + `"`, `ingress device "` + insideDev + `"`}
	}
	return fmt.Sprintf("table %[1]s %[2]s\ndelete table %[1]s %[2]s\ntable %[1]s %[2]s {\n"+
		"\tchain out {\n\t\ttype filter hook %[3]s priority 0; policy accept;\n%[4]s\t}\n"+
		"\tchain in {\n\t\ttype filter hook %[5]s priority 0; policy accept;\n%[6]s\t}\n}\n",
		family, partitionTable, hooks[0], out, hooks[1], in)
}

// Heal lifts every partition.
func (n *Netns) Heal() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.cut) == 0 {
		return nil
	}
	if err := n.nftables(fmt.Sprintf("delete table %s %s\n", n.family, partitionTable)); err != nil {
		return fmt.Errorf("heal %s: %w", n.Name, err)
	}
	n.cut = nil
	return nil
}

// nftables runs the nftables script inside the namespace.
func (n *Netns) nftables(script string) error {
	cmd := exec.Command(n.ip, "netns", "exec", n.Name, n.nft, "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	return runCmd(cmd, nil)
}

// Dial connects from inside the namespace to addr within timeout.
func (n *Netns) Dial(addr string, timeout time.Duration) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread, now in the namespace, ends with this goroutine
		f, err := os.Open("/run/netns/" + n.Name)
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{nil, fmt.Errorf("setns %s: %w", n.Name, err)}
			return
		}
		c, err := net.DialTimeout("tcp", addr, timeout)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

// command returns the command that runs bin with args inside the namespace (ip netns exec,
// which execs bin in its own process: Pdeathsig set by StartProcess holds for it). bin is
// handed over open, as descriptor 3, so that a path valid only in this process (BuildAPI's
// /proc/self/fd/N) runs too; the caller closes the returned file once the command started.
func (n *Netns) command(bin string, args ...string) (*exec.Cmd, *os.File, error) {
	f, err := os.Open(bin)
	if err != nil {
		return nil, nil, fmt.Errorf("run %s in %s: %w", bin, n.Name, err)
	}
	cmd := exec.Command(n.ip, append([]string{"netns", "exec", n.Name, "/proc/self/fd/3"}, args...)...)
	cmd.ExtraFiles = []*os.File{f}
	return cmd, f, nil
}

// listenAddr returns an address inside the namespace for a process to listen on: each call
// a port of its own.
func (n *Netns) listenAddr() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ports++
	return net.JoinHostPort(n.Inside, strconv.Itoa(8000+n.ports))
}

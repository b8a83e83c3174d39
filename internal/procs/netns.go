package procs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Netns is a network namespace joined to the root one by a veth pair
// (docs/testing.md#network-namespaces). Safe for concurrent use.
type Netns struct {
	Name   string // as ip netns knows it: sk-<pid>-<n>-<test>
	Host   string // the root namespace's end of the veth pair, e.g. 10.200.3.1
	Inside string // the namespace's end, e.g. 10.200.3.2

	ip, nft string
	hostDev string // the veth end in the root namespace: sk<pid>-<n>h

	mu     sync.Mutex
	cut    []string // host:port whose packets are dropped, while partitioned
	family string   // the nftables family that works here ("netdev", or "inet" on old kernels)
	ports  int      // listening ports handed out (listenAddr)
	fwds   []*forwarder
}

// insideDev is the name of the veth end inside every namespace.
const insideDev = "veth0"

// partitionTable is the nftables table of a namespace's partition rules.
const partitionTable = "seckill_partition"

// netnsCount numbers the namespaces of this process; it picks their names and subnets.
var netnsCount atomic.Int64

// subnetBase is where this process starts looking for free /30 subnets of 10.200.0.0/16,
// picked at random so that test binaries running side by side rarely try the same first.
var subnetBase = rand.IntN(subnets)

// subnets is how many /30 subnets 10.200.0.0/16 holds.
const subnets = 1 << 14

// sweepOnce removes the leftovers of dead programs, once per process.
var sweepOnce sync.Once

// StartNetns creates a Netns named after name; the caller calls Close. Without root, ip or nft
// it returns ErrUnavailable.
func StartNetns(name string) (_ *Netns, err error) {
	ip, nft, err := netnsBins()
	if err != nil {
		return nil, err
	}
	n := &Netns{ip: ip, nft: nft}
	unlock, err := lockNetns()
	if err != nil {
		return nil, err
	}
	defer unlock()
	var sweepErr error
	sweepOnce.Do(func() { sweepErr = sweepNetns(ip) })
	if sweepErr != nil {
		return nil, fmt.Errorf("remove leftover namespaces: %w", sweepErr)
	}
	id := strconv.FormatInt(int64(os.Getpid()), 36) + "-" + strconv.FormatInt(netnsCount.Add(1), 36)
	n.Name, n.hostDev = "sk-"+id+"-"+slug(name), "sk"+id+"h"
	if len(n.hostDev) > 15 { // IFNAMSIZ-1; a pid of 7 base-36 digits cannot happen on Linux
		return nil, fmt.Errorf("veth name %q too long", n.hostDev)
	}
	sub, err := freeSubnet(ip)
	if err != nil {
		return nil, err
	}
	n.Host, n.Inside = sub.Addr().Next().String(), sub.Addr().Next().Next().String()
	defer func() {
		if err != nil {
			err = errors.Join(err, n.Close())
		}
	}()
	for _, args := range [][]string{
		{"netns", "add", n.Name},
		{"link", "add", n.hostDev, "type", "veth", "peer", "name", insideDev, "netns", n.Name},
		{"addr", "add", n.Host + "/30", "dev", n.hostDev},
		{"link", "set", n.hostDev, "up"},
		{"-n", n.Name, "addr", "add", n.Inside + "/30", "dev", insideDev},
		{"-n", n.Name, "link", "set", insideDev, "up"},
		{"-n", n.Name, "link", "set", "lo", "up"},
		{"-n", n.Name, "route", "add", "default", "via", n.Host},
	} {
		if err := run(nil, ip, args...); err != nil {
			return nil, fmt.Errorf("network namespace %s: %w", n.Name, err)
		}
	}
	return n, nil
}

// NetnsSupported says why StartNetns cannot run here (not root, ip or nft missing), or nil.
func NetnsSupported() error {
	_, _, err := netnsBins()
	return err
}

// netnsBins returns the paths of ip and nft, or why network namespaces cannot be made here.
func netnsBins() (ip, nft string, err error) {
	ip, nft = sbin("ip"), sbin("nft")
	why := ""
	switch {
	case os.Geteuid() != 0:
		why = "network namespaces need root"
	case ip == "":
		why = "ip (iproute2) not found"
	case nft == "":
		why = "nft (nftables) not found"
	default:
		return ip, nft, nil
	}
	return "", "", unavailable(why + ": a process in a network namespace of its own, cut off by nftables rules (Debian packages iproute2 and nftables)")
}

// sbin returns the path of the program name on PATH or in the sbin directories (a user's PATH
// may lack them), or "".
func sbin(name string) string {
	for _, p := range []string{name, "/usr/sbin/" + name, "/sbin/" + name} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	return ""
}

// slug is a short form of a caller's name (a test's) for a namespace's name: letters and digits of its
// last 16 characters.
func slug(name string) string {
	name = regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(name, "")
	return name[max(0, len(name)-16):]
}

// lockNetns takes a lock shared by every program on the machine (flock on a file in the
// temporary directory), so that two of them never pick the same subnet, nor sweep a
// namespace being made; it returns the unlock.
func lockNetns() (func(), error) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "seckill-netns.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("network namespace lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("network namespace lock: %w", err)
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}

// freeSubnet returns a /30 subnet of 10.200.0.0/16 that no address of the root namespace
// lies in (each namespace's host end is one).
func freeSubnet(ip string) (netip.Prefix, error) {
	var out bytes.Buffer
	if err := run(&out, ip, "-4", "-o", "addr", "show", "to", "10.200.0.0/16"); err != nil {
		return netip.Prefix{}, err
	}
	var used []netip.Addr
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line) // "7: sk2hwz4-1h    inet 10.200.3.1/30 scope global ..."
		for i := 0; i+1 < len(f); i++ {
			if p, err := netip.ParsePrefix(f[i+1]); f[i] == "inet" && err == nil {
				used = append(used, p.Addr())
			}
		}
	}
	for i := range subnets {
		k := (subnetBase + int(netnsCount.Load()) + i) % subnets
		sub := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 200, byte(k / 64), byte(k % 64 * 4)}), 30)
		if !slices.ContainsFunc(used, sub.Contains) {
			return sub, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("no free /30 subnet in 10.200.0.0/16")
}

// leftover matches the names of this package's namespaces and host veth ends, with the pid
// of the process that made them in base 36.
var leftover = regexp.MustCompile(`^sk(?:-([0-9a-z]{1,5})-[0-9a-z]{1,6}-|([0-9a-z]{1,5})-[0-9a-z]{1,6}h$)`)

// sweepNetns removes the namespaces and veth ends of programs that are gone: one killed
// before it closed them leaves them behind.
func sweepNetns(ip string) error {
	var nsList, links bytes.Buffer
	if err := run(&nsList, ip, "netns", "list"); err != nil {
		return err
	}
	if err := run(&links, ip, "-o", "link", "show"); err != nil {
		return err
	}
	// The veth ends first: deleting a namespace frees its veth pair only later, in the
	// background.
	var errs []error
	for _, line := range strings.Split(links.String(), "\n") {
		// "7: sk2hwz4-1h@if2: <BROADCAST,..."
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		if deadOwner(name) {
			errs = append(errs, run(nil, ip, "link", "del", name))
		}
	}
	for _, line := range strings.Split(nsList.String(), "\n") {
		if f := strings.Fields(line); len(f) > 0 && deadOwner(f[0]) {
			errs = append(errs, run(nil, ip, "netns", "del", f[0]))
		}
	}
	return errors.Join(errs...)
}

// deadOwner reports whether name is one of this package's, made by a process that is gone.
func deadOwner(name string) bool {
	m := leftover.FindStringSubmatch(name)
	if m == nil {
		return false
	}
	pid, err := strconv.ParseInt(m[1]+m[2], 36, 64)
	if err != nil || pid <= 0 || pid > 1<<22 {
		return false
	}
	err = syscall.Kill(int(pid), 0)
	return err == syscall.ESRCH
}

// Close stops the forwarders and deletes the namespace. Stop its processes first.
func (n *Netns) Close() error {
	n.mu.Lock()
	fwds := n.fwds
	n.fwds = nil
	n.mu.Unlock()
	for _, f := range slices.Backward(fwds) {
		f.close()
	}
	var errs []error
	for _, args := range [][]string{{"link", "del", n.hostDev}, {"netns", "del", n.Name}} {
		if err := run(nil, n.ip, args...); err != nil && !strings.Contains(err.Error(), "Cannot find device") &&
			!strings.Contains(err.Error(), "No such file") {
			errs = append(errs, fmt.Errorf("remove network namespace %s: %w", n.Name, err))
		}
	}
	return errors.Join(errs...)
}

// run runs a short command (10 s at most) with its output to out (nil: kept for the error).
func run(out *bytes.Buffer, bin string, args ...string) error {
	return runCmd(exec.Command(bin, args...), out)
}

func runCmd(cmd *exec.Cmd, out *bytes.Buffer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	c.Stdin = cmd.Stdin
	var stderr bytes.Buffer
	if out == nil {
		out = &stderr
	}
	c.Stdout, c.Stderr = out, &stderr
	if err := c.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(c.Args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// Exec is a command that runs argv inside the namespace (ip netns exec).
func (n *Netns) Exec(argv ...string) *exec.Cmd {
	return exec.Command(n.ip, append([]string{"netns", "exec", n.Name}, argv...)...)
}

package procs

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// What a caller asks of a running ZooKeeper member (zookeeper.go): its mode, its sessions,
// the ensemble's leader.

// Mode returns leader, follower or standalone, or "" when the member does not serve.
func (m *ZooKeeper) Mode() string {
	for _, line := range strings.Split(m.fourLetter("srvr"), "\n") {
		if mode, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(mode)
		}
	}
	return ""
}

// Sessions returns the member's client sessions, 0 when it does not answer.
func (m *ZooKeeper) Sessions() int {
	n := 0
	for _, line := range strings.Split(m.fourLetter("cons"), "\n") {
		if strings.Contains(line, "sid=0x") && !strings.Contains(line, "sid=0xffffffffffffffff") {
			n++
		}
	}
	return n
}

// fourLetter is the member's answer to a four-letter word within a second; empty if none.
func (m *ZooKeeper) fourLetter(word string) string {
	conn, err := net.DialTimeout("tcp", m.Addr, time.Second)
	if err != nil {
		return ""
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte(word)); err != nil {
		return ""
	}
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := conn.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

// ZooKeeperLeader waits up to 15 s for a leader with a serving majority and returns it.
func ZooKeeperLeader(members []*ZooKeeper) (*ZooKeeper, error) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		var leader *ZooKeeper
		serving := 0
		for _, m := range members {
			if !m.up() {
				continue
			}
			switch m.Mode() {
			case "leader":
				leader = m
				serving++
			case "follower":
				serving++
			}
		}
		if leader != nil && serving > len(members)/2 {
			return leader, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no ZooKeeper leader with a serving majority of %d members within 15s", len(members))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

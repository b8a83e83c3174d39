package launch

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// EtcdEndpoints returns the members' client URLs.
func EtcdEndpoints(members []*Etcd) []string {
	urls := make([]string, len(members))
	for i, m := range members {
		urls[i] = m.ClientURL
	}
	return urls
}

// EtcdLeader waits up to 15 s until a majority of members name the same leader, one of members
// that runs unpaused, and returns it, or an error once the time is up. It asks each member that runs
// unpaused for its status (POST /v3/maintenance/status, etcd's JSON gateway), so just after a
// leader is stopped or paused it waits for the election that follows.
func EtcdLeader(members []*Etcd) (*Etcd, error) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		byID := map[string]*Etcd{}
		votes := map[string]int{}
		for _, m := range members {
			if !m.up() {
				continue
			}
			if id, leader, err := m.status(); err == nil {
				byID[id] = m
				votes[leader]++
			}
		}
		for leader, n := range votes {
			if l := byID[leader]; l != nil && n > len(members)/2 {
				return l, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no leader that a majority of the %d etcd members agree on within 15s (votes by member id: %v)", len(members), votes)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// status returns the member's id and the id of the leader it knows ("0" or "" if none).
func (m *Etcd) status() (id, leader string, err error) {
	resp, err := etcdHTTP.Post(m.ClientURL+"/v3/maintenance/status", "application/json", strings.NewReader("{}"))
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	var s struct { // the gateway writes uint64 as strings
		Header struct {
			MemberID string `json:"member_id"`
		} `json:"header"`
		Leader string `json:"leader"`
	}
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("status of etcd member %s: %s", m.Name, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return "", "", fmt.Errorf("status of etcd member %s: %w", m.Name, err)
	}
	return s.Header.MemberID, s.Leader, nil
}

package main

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// scenario is the part of config that shapes the load, as recorded in the reports.
type scenario struct {
	Targets      []string      `json:"targets"`
	EtcdTargets  []string      `json:"etcd_targets,omitempty"` // compare -etcd-targets
	Stock        int64         `json:"stock"`
	ThinkMS      int           `json:"think_ms"`
	Rate         int           `json:"rate"`
	Workers      int           `json:"workers"`
	MaxWorkers   int           `json:"max_workers,omitempty"`
	Duration     time.Duration `json:"duration_ns"`
	Requests     uint64        `json:"max_requests"`
	RepeatShare  float64       `json:"repeat_share"`
	Seed         uint64        `json:"seed"`
	Timeout      time.Duration `json:"timeout_ns"`
	AfterSoldOut time.Duration `json:"after_soldout_ns"`
	LoadgenCPUs  int           `json:"loadgen_gomaxprocs"`
}

func (c *config) scenario() scenario {
	s := scenario{
		Targets: c.targets, EtcdTargets: c.etcdTargets, Stock: c.stock, ThinkMS: c.thinkMS, Rate: c.rate, Workers: c.workers,
		Duration: c.duration, Requests: c.requests, RepeatShare: c.repeatShare, Seed: c.seed,
		Timeout: c.timeout, AfterSoldOut: c.afterSold, LoadgenCPUs: runtime.GOMAXPROCS(0),
	}
	if c.rate > 0 {
		s.MaxWorkers = c.maxWorkers
	}
	return s
}

// describe is the scenario in one line, for the text reports.
func (s scenario) describe() string {
	pace := fmt.Sprintf("%d users at once", s.Workers)
	if s.Rate > 0 {
		pace = fmt.Sprintf("%d req/s (%d-%d workers)", s.Rate, s.Workers, s.MaxWorkers)
	}
	stop := ""
	if s.AfterSoldOut > 0 {
		stop = fmt.Sprintf(", stop %s after sold out", s.AfterSoldOut)
	}
	etcd := ""
	if len(s.EtcdTargets) > 0 {
		etcd = fmt.Sprintf(" and %d with locks in etcd", len(s.EtcdTargets))
	}
	return fmt.Sprintf("stock %d, think %d ms, %s, at most %s or %d requests%s, repeat share %s, %d API target(s)%s",
		s.Stock, s.ThinkMS, pace, s.Duration, s.Requests, stop, strconv.FormatFloat(s.RepeatShare, 'f', -1, 64), len(s.Targets), etcd)
}

// metaFlag collects repeated -meta key=value flags, in order.
type metaFlag [][2]string

func (m *metaFlag) String() string { return fmt.Sprint([][2]string(*m)) }

func (m *metaFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", v)
	}
	*m = append(*m, [2]string{k, val})
	return nil
}

// object returns the pairs as a map for the JSON report.
func (m metaFlag) object() map[string]string {
	if len(m) == 0 {
		return nil
	}
	o := make(map[string]string, len(m))
	for _, kv := range m {
		o[kv[0]] = kv[1]
	}
	return o
}

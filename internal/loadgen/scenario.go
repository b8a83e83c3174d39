package loadgen

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Scenario is the part of config that shapes the load, as recorded in the reports.
type Scenario struct {
	Targets          []string      `json:"targets"`
	EtcdTargets      []string      `json:"etcd_targets,omitempty"`      // compare -etcd-targets
	ZooKeeperTargets []string      `json:"zookeeper_targets,omitempty"` // compare -zookeeper-targets
	Stock            int64         `json:"stock"`
	ThinkMS          int           `json:"think_ms"`
	Model            string        `json:"model"` // open or closed
	Rate             int           `json:"rate"`
	Stages           string        `json:"stages,omitempty"`
	Workers          int           `json:"workers"`
	MaxWorkers       int           `json:"max_workers,omitempty"`
	Duration         time.Duration `json:"duration_ns"`
	Requests         uint64        `json:"max_requests"`
	RepeatShare      float64       `json:"repeat_share"`
	Seed             uint64        `json:"seed"`
	Timeout          time.Duration `json:"timeout_ns"`
	AfterSoldOut     time.Duration `json:"after_soldout_ns"`
	LoadgenCPUs      int           `json:"loadgen_gomaxprocs"`
	// Opening is the opening of -model opening; nil otherwise.
	Opening *ScenarioOpening `json:"opening,omitempty"`
}

// ScenarioOpening is Opening as the reports record it.
type ScenarioOpening struct {
	InMS       int64   `json:"in_ms"`
	Burst      int     `json:"burst"`
	WindowMS   float64 `json:"window_ms"`
	EarlyShare float64 `json:"early_share"`
	EarlyHits  int     `json:"early_hits"`
	// A line's rate, window and purchases a buyer (-line-rate ...); absent without a line.
	LineRate     int   `json:"line_rate,omitempty"`
	LineWindowMS int64 `json:"line_window_ms,omitempty"`
	LineTries    int   `json:"line_tries,omitempty"`
}

func (c *Config) Scenario() Scenario {
	s := Scenario{
		Targets: c.Targets, EtcdTargets: c.EtcdTargets, ZooKeeperTargets: c.ZooKeeperTargets, Stock: c.Stock, ThinkMS: c.ThinkMS, Model: c.model(), Rate: c.Rate,
		Stages: c.Stages.String(), Workers: c.Workers,
		Duration: c.Duration, Requests: c.Requests, RepeatShare: c.RepeatShare, Seed: c.Seed,
		Timeout: c.Timeout, AfterSoldOut: c.AfterSoldOut, LoadgenCPUs: runtime.GOMAXPROCS(0),
	}
	if s.Model == ModelOpen || s.Model == ModelOpening {
		s.MaxWorkers = c.MaxWorkers
	}
	if o := c.Opening; s.Model == ModelOpening {
		s.Opening = &ScenarioOpening{InMS: o.In.Milliseconds(), Burst: o.Burst, WindowMS: ms(o.Window), EarlyShare: o.EarlyShare, EarlyHits: o.EarlyHits}
		if o.LineRate > 0 {
			s.Opening.LineRate, s.Opening.LineWindowMS, s.Opening.LineTries = o.LineRate, o.LineWindow.Milliseconds(), o.LineTries
		}
		s.Rate, s.Requests, s.RepeatShare = 0, uint64(o.requests()), 0
	}
	return s
}

// describe is the scenario in one line, for the text reports.
func (s Scenario) describe() string {
	if s.Model == "" { // a report from before the models: paced was open
		s.Model = ModelClosed
		if s.Rate > 0 {
			s.Model = ModelOpen
		}
	}
	pace := fmt.Sprintf("closed, %d users at once", s.Workers)
	switch o := s.Opening; {
	case s.Model == ModelOpening && o != nil:
		pace = fmt.Sprintf("opening in %d ms: %d buyers within %s from T0, %.0f%% of them %d requests each before it (at most %d in flight)",
			o.InMS, o.Burst, fmtMS(o.WindowMS), 100*o.EarlyShare, o.EarlyHits, s.MaxWorkers)
		if o.LineRate > 0 {
			pace += fmt.Sprintf("; through a line of %d/s, window %d ms: the early ones join %d times, every buyer once, and each purchases at most %d times from T0, following its place",
				o.LineRate, o.LineWindowMS, o.EarlyHits, o.LineTries)
		}
	case s.Model == ModelOpen && s.Stages != "":
		pace = fmt.Sprintf("open, stages %s (at most %d in flight)", s.Stages, s.MaxWorkers)
	case s.Model == ModelOpen:
		pace = fmt.Sprintf("open, %d arrivals/s (at most %d in flight)", s.Rate, s.MaxWorkers)
	case s.Rate > 0:
		pace = fmt.Sprintf("closed, %d users at once paced at %d req/s", s.Workers, s.Rate)
	}
	stop := ""
	if s.AfterSoldOut > 0 {
		stop = fmt.Sprintf(", stop %s after sold out", s.AfterSoldOut)
	}
	etcd := ""
	if len(s.EtcdTargets) > 0 {
		etcd = fmt.Sprintf(" and %d with locks in etcd", len(s.EtcdTargets))
	}
	if len(s.ZooKeeperTargets) > 0 {
		etcd += fmt.Sprintf(" and %d with locks in ZooKeeper", len(s.ZooKeeperTargets))
	}
	return fmt.Sprintf("stock %d, think %d ms, %s, at most %s or %d requests%s, repeat share %s, %d API target(s)%s",
		s.Stock, s.ThinkMS, pace, s.Duration, s.Requests, stop, strconv.FormatFloat(s.RepeatShare, 'f', -1, 64), len(s.Targets), etcd)
}

// Meta is the -meta key=value pairs, in order.
type Meta [][2]string

// Object returns the pairs as a map for the JSON report.
func (m Meta) Object() map[string]string {
	if len(m) == 0 {
		return nil
	}
	o := make(map[string]string, len(m))
	for _, kv := range m {
		o[kv[0]] = kv[1]
	}
	return o
}

// ShellLine joins words into a command line a POSIX shell splits back into them.
func ShellLine(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = shellQuote(w)
	}
	return strings.Join(quoted, " ")
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,:/@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

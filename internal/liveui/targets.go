package liveui

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seckill/seckill/internal/loadgen"
)

// Target is an API loadtest ui may attack, fixed at start by -targets or -etcd-targets. A
// run picks it by name or by index, never by URL.
type Target struct {
	Name string `json:"name"` // host:port and path of its URL: 127.0.0.1:8081
	URL  string `json:"url"`
}

// Limits are the ceilings of a strategies run, fixed at start.
type Limits struct {
	Buyers   int           // -max-buyers: most concurrent buyers (compare -workers)
	Duration time.Duration // -max-duration: longest attack per strategy
	Rate     int           // -max-rate: most requests per second
}

// DefaultLimits are the ceilings of loadtest ui unless its flags say otherwise.
var DefaultLimits = Limits{Buyers: 1024, Duration: time.Minute, Rate: 5000}

// Validate reports every ceiling of l out of its range, naming its flag.
func (l Limits) Validate() error {
	var errs []error
	if l.Buyers < 1 || l.Buyers > 100_000 {
		errs = append(errs, fmt.Errorf("-max-buyers %d: want 1 to 100000", l.Buyers))
	}
	if l.Duration < time.Second || l.Duration > time.Hour {
		errs = append(errs, fmt.Errorf("-max-duration %s: want 1s to 1h", l.Duration))
	}
	if l.Rate < 1 {
		errs = append(errs, fmt.Errorf("-max-rate %d: want at least 1 request per second", l.Rate))
	}
	return errors.Join(errs...)
}

// uiRefusal is a run request refused with a code of its own (a 400).
type uiRefusal struct{ code, detail string }

func (e uiRefusal) Error() string { return e.detail }

// check refuses req when it asks for more than a ceiling: 400 over_max_buyers,
// over_max_duration or over_max_rate.
func (l Limits) check(req runRequest) error {
	switch {
	case req.Buyers > l.Buyers:
		return uiRefusal{"over_max_buyers", fmt.Sprintf("buyers %d: this page allows at most %d (-max-buyers of loadtest ui)", req.Buyers, l.Buyers)}
	case req.DurationS > int(l.Duration/time.Second):
		return uiRefusal{"over_max_duration", fmt.Sprintf("duration_s %d: this page allows at most %d s per strategy (-max-duration of loadtest ui)", req.DurationS, int(l.Duration/time.Second))}
	case req.Rate < 0:
		return uiRefusal{"bad_request", fmt.Sprintf("rate %d: want 0 (the ceiling, %d) to %d requests per second", req.Rate, l.Rate, l.Rate)}
	case time.Duration(req.PayWithinMS)*time.Millisecond > l.Duration:
		return uiRefusal{"over_max_duration", fmt.Sprintf("pay_within_ms %d: this page allows a payment window of at most %d s (-max-duration of loadtest ui): an abandonment sale waits for its last reservations to expire", req.PayWithinMS, int(l.Duration/time.Second))}
	case req.Opening != nil && cmp.Or(req.Opening.Burst, loadgen.DefaultOpening().Burst) > l.Rate:
		return uiRefusal{"over_max_rate", fmt.Sprintf("opening burst %d: this page allows a burst of at most %d buyers (-max-rate of loadtest ui)",
			cmp.Or(req.Opening.Burst, loadgen.DefaultOpening().Burst), l.Rate)}
	case req.Rate > l.Rate:
		return uiRefusal{"over_max_rate", fmt.Sprintf("rate %d: this page allows at most %d requests per second (-max-rate of loadtest ui)", req.Rate, l.Rate)}
	}
	return nil
}

// FixedTargets parses the comma-separated base URLs of flag (-targets or -etcd-targets),
// each named by its host:port and path; taken are the names already used, which no target
// may repeat.
func FixedTargets(flag, list string, taken []Target) ([]Target, error) {
	var targets []Target
	for _, s := range loadgen.BaseURLs(list) {
		p, err := loadgen.ParseBaseURL(flag, s)
		if err == nil && p.User != nil {
			err = fmt.Errorf("%s: %q carries credentials: the page shows its targets", flag, s)
		}
		if err != nil {
			return nil, loadgen.UsageError{Err: err}
		}
		t := Target{Name: p.Host + p.Path, URL: s}
		for _, o := range append(taken, targets...) {
			if o.Name == t.Name {
				return nil, loadgen.UsageError{Err: fmt.Errorf("%s: %s is named twice (by -targets and -etcd-targets, or twice in one)", flag, t.Name)}
			}
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// pickTargets resolves a run request's field (targets or etcd_targets) to the URLs of its
// choice among fixed: absent or null is all of them; else a list (or a comma-separated
// string) of their names or indexes. A URL is refused (400 target_url_refused), and so is a
// name or index that is not there (400 unknown_target): a run attacks, and the admin token
// goes to, only the targets fixed at start.
func pickTargets(field string, raw json.RawMessage, fixed []Target) ([]string, error) {
	var refs []string
	var list []json.RawMessage
	var one string
	switch {
	case len(raw) == 0 || string(raw) == "null":
		for _, t := range fixed {
			refs = append(refs, t.Name)
		}
	case json.Unmarshal(raw, &one) == nil:
		refs = loadgen.SplitList(one)
	case json.Unmarshal(raw, &list) == nil:
		for _, e := range list {
			var s string
			var i int
			if json.Unmarshal(e, &s) == nil {
				refs = append(refs, strings.TrimSpace(s))
			} else if json.Unmarshal(e, &i) == nil {
				refs = append(refs, strconv.Itoa(i))
			} else {
				return nil, uiRefusal{"bad_request", fmt.Sprintf("%s: %s is neither a target's name nor its index", field, e)}
			}
		}
	default:
		return nil, uiRefusal{"bad_request", field + ": want a list of the targets' names or indexes"}
	}
	var urls []string
	for _, ref := range refs {
		if strings.Contains(ref, "://") || strings.HasPrefix(ref, "//") {
			return nil, uiRefusal{"target_url_refused", fmt.Sprintf("%s: %q is a URL: a run attacks only the targets loadtest ui was started with; pick them by name or index (%s)", field, ref, targetNames(fixed))}
		}
		t, ok := findTarget(ref, fixed)
		if !ok {
			return nil, uiRefusal{"unknown_target", fmt.Sprintf("%s: no target %q; there are %s", field, ref, targetNames(fixed))}
		}
		if !slices.Contains(urls, t.URL) {
			urls = append(urls, t.URL)
		}
	}
	return urls, nil
}

// findTarget is the target of fixed named ref, or at index ref.
func findTarget(ref string, fixed []Target) (Target, bool) {
	if i, err := strconv.Atoi(ref); err == nil {
		if i >= 0 && i < len(fixed) {
			return fixed[i], true
		}
		return Target{}, false
	}
	for _, t := range fixed {
		if strings.EqualFold(t.Name, ref) {
			return t, true
		}
	}
	return Target{}, false
}

func targetNames(fixed []Target) string {
	if len(fixed) == 0 {
		return "none"
	}
	var names []string
	for i, t := range fixed {
		names = append(names, fmt.Sprintf("%s (%d)", t.Name, i))
	}
	return strings.Join(names, ", ")
}

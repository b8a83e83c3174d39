// Package loadgen is the load tester's engine: it sells products of the seckill API to a
// crowd with vegeta's library, in an open load model (arrivals on a schedule) or a closed one
// (a pool of workers), audits each sale through the API and directly in PostgreSQL and Redis,
// judges it, and reports it (text, JSON with HDR latency histograms raw and corrected for
// coordinated omission, .hgrm, a CSV row per second, an HTML latency plot, vegeta's
// results); Merge combines the reports of several load machines.
// It also runs the oversell lab's matrix (internal/labrun) as loadtest lab does.
//
// Execute runs the attacks of a Config; an Observer, when given, is told what happens as it
// happens (the live page, internal/liveui). Nothing here reads flags or the environment, or
// exits: cmd/loadtest fills a Config from its command line (DefaultConfig has its defaults),
// and a run that broke the promise is ErrAuditFailed, one whose figures breached a threshold
// ErrThresholds, a bad configuration a UsageError. Every request goes through the client of
// Config.Deploy (Deployment.HTTPClient): its headers and TLS reach any deployment.
package loadgen

import "errors"

// ErrAuditFailed is returned (wrapped) when a run broke the promise: a safe strategy oversold,
// sold a user twice or left the audit inconsistent, naive did not oversell when asked to, or
// a lab cell did not come out as written down. cmd/loadtest exits 3 for it.
var ErrAuditFailed = errors.New("audit failed")

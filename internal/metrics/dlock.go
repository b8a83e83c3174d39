package metrics

import "time"

// The methods below implement dlock.Observer. Lock keys are not used as labels: one per
// product would make the label set unbounded.

// Obtained records a successful Obtain.
func (m *Metrics) Obtained(_ string, wait time.Duration) {
	m.lockWait.WithLabelValues("obtained").Observe(wait.Seconds())
}

// NotObtained records an Obtain that gave up or failed.
func (m *Metrics) NotObtained(_ string, wait time.Duration, _ error) {
	m.lockWait.WithLabelValues("not_obtained").Observe(wait.Seconds())
}

// Contended records an attempt that found the key held.
func (m *Metrics) Contended(string) { m.contended.Inc() }

// Renewed records a watchdog renewal.
func (m *Metrics) Renewed(_ string, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.renewals.WithLabelValues(result).Inc()
}

// Lost records a lock lost while held.
func (m *Metrics) Lost(string, error) { m.lost.Inc() }

// Released records a release and how long the lock was held.
func (m *Metrics) Released(_ string, held time.Duration, err error) {
	m.lockHold.Observe(held.Seconds())
	if err != nil {
		m.releaseErr.Inc()
	}
}

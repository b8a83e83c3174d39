package dlock

import "time"

// Observer receives lock events, for metrics and logs. Implementations must be
// safe for concurrent use and must not block: they run on the lock's hot
// paths. Embed NopObserver to implement only some methods.
type Observer interface {
	// Obtained reports a successful Obtain; wait includes local queueing.
	Obtained(key string, wait time.Duration)
	// NotObtained reports a failed Obtain: busy (ErrNotObtained), cancelled,
	// or a Redis error.
	NotObtained(key string, wait time.Duration, err error)
	// Contended reports an attempt that found the key held by someone else,
	// or a Wait-0 Obtain that found another goroutine of this Client queued.
	Contended(key string)
	// Renewed reports each watchdog renewal; err is nil on success.
	Renewed(key string, err error)
	// Lost reports, once per lock, that the lock was lost while held.
	Lost(key string, cause error)
	// Released reports a Release; held is the time since the acquisition.
	Released(key string, held time.Duration, err error)
}

// NopObserver ignores every event. Embed it in an Observer to override only
// the methods of interest.
type NopObserver struct{}

// Obtained implements Observer.
func (NopObserver) Obtained(string, time.Duration) {}

// NotObtained implements Observer.
func (NopObserver) NotObtained(string, time.Duration, error) {}

// Contended implements Observer.
func (NopObserver) Contended(string) {}

// Renewed implements Observer.
func (NopObserver) Renewed(string, error) {}

// Lost implements Observer.
func (NopObserver) Lost(string, error) {}

// Released implements Observer.
func (NopObserver) Released(string, time.Duration, error) {}

// Package history records what happened in a run as histories of operations, each with the
// time it was invoked, the time it completed and its outcome, and checks them with a
// linearizability checker (github.com/anishathalye/porcupine), as Jepsen does: a history is
// correct when some legal order of its operations, each placed between its invoke and its
// completion, explains every outcome.
//
// Two histories are kept: purchases (Purchase), per buyer, checked against a stock model per
// product, with the units that come back (Return) for products sold with a payment window;
// and lock operations (LockOp), per process, checked against a fenced-mutex model.
// Histories travel as JSON lines, one operation per line, so that processes can record them
// and tests and cmd/loadtest can check them.
//
// CheckLocks and CheckPurchases say what each model allows. Both split the history into
// independent parts (lock keys, products) that porcupine checks in parallel, leave out the
// operations that changed nothing, and give an operation with no known outcome no completion
// time, which is how porcupine lets it take effect at any time after its invoke. When a
// check fails they write porcupine's HTML page of the history: each operation a bar from its
// invoke to its completion, the longest orders the checker could build, and the operations
// none of them could place, in red.
//
// Checking linearizability is NP-hard in general. On correct histories the search finds an
// order almost without backtracking; proving that no order exists can take it time
// exponential in the operations in flight. So CheckPurchases counts first what a count
// proves (Result.Reasons), and decides without the search the answers that are legal in
// every order (Result.Settled); a timeout bounds the rest, and MaxSearch the memory.
// TestShortcutsAgreeWithSearch holds the shortcuts to porcupine alone.
package history

import "time"

// Outcomes of an operation, as Jepsen names them.
const (
	OK      = "ok"      // it happened
	Fail    = "fail"    // it did not happen
	Unknown = "unknown" // no answer: it may or may not have happened
)

// LockOp is one process's lock operation: grant, release, loss, write, or (for the timeline
// only) read and fault. The fields after Outcome are optional.
type LockOp struct {
	Process string `json:"process"` // who: the API process's name or pid
	Kind    string `json:"kind"`    // "grant", "release", "loss", "write", "read" or "fault"
	Key     string `json:"key"`     // the lock's key
	// Token identifies the grant the operation belongs to.
	Token string `json:"token"`
	// Fence is the grant's fencing token, 0 for none.
	Fence    int64     `json:"fence,omitempty"`
	Invoke   time.Time `json:"invoke"`
	Complete time.Time `json:"complete"`
	Outcome  string    `json:"outcome"` // OK, Fail or Unknown

	// Value is the stock read or written. Nil: not recorded.
	Value *int `json:"value,omitempty"`
	// Before is the stock an applied write overwrote. Nil: not recorded.
	Before *int `json:"before,omitempty"`
	// Reason says why an operation failed or was Unknown.
	Reason string `json:"reason,omitempty"`
	// Fault is one of the Fault constants.
	Fault string `json:"fault,omitempty"`
}

// Why a read or write under a lock failed (LockOp.Reason), when a reason is known.
const (
	ReasonFence = "stale fence" // the store had seen a newer fence: refused
	ReasonLost  = "lock lost"   // the lock's loss cancelled it before it took effect
)

// Faults done to a process (LockOp.Fault).
const (
	FaultPause     = "pause"
	FaultKill      = "kill"
	FaultFailover  = "failover"
	FaultPartition = "partition"
)

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

// LockOp is one operation on a lock by one process: a grant, a release, the holder told it
// lost the lock, or a write guarded by the lock; and, for the lock timeline
// (internal/timeline), which the checker leaves out, a read of what the lock guards, and a
// fault done to the process (by the lab's runner). The fields after Outcome are optional
// (omitted when empty), so a history recorded before they were is read as it was.
type LockOp struct {
	Process string `json:"process"` // who: the API process's name or pid
	Kind    string `json:"kind"`    // "grant", "release", "loss", "write", "read" or "fault"
	Key     string `json:"key"`     // the lock's key
	// Token identifies the grant (the lock's value); a release, loss, read or write carries
	// the token of the grant it belongs to.
	Token string `json:"token"`
	// Fence is the grant's fencing token, 0 for a lock without one; a read or write carries
	// the fence it was guarded by.
	Fence    int64     `json:"fence,omitempty"`
	Invoke   time.Time `json:"invoke"`
	Complete time.Time `json:"complete"`
	Outcome  string    `json:"outcome"` // OK, Fail or Unknown

	// Value is, for a read, the stock it read; for a write, the stock it wrote (PostgreSQL's
	// answer and the holder's value, not reconstructed). Nil: not recorded.
	Value *int `json:"value,omitempty"`
	// Before is, for a write that PostgreSQL applied, the stock it overwrote, read with the
	// row locked in the write's own statement: a write of anything but Before-1 lost
	// decrements. Nil: not recorded (or the write was not applied).
	Before *int `json:"before,omitempty"`
	// Reason says why an operation failed (ReasonFence, ReasonLost, or the error), or, for a
	// release with outcome Unknown, what the lock's store answered.
	Reason string `json:"reason,omitempty"`
	// Fault is, for a fault, what was done: FaultPause (SIGSTOP to SIGCONT, Invoke to
	// Complete), FaultKill, FaultFailover (the Redis master killed under the holder) or
	// FaultPartition (cut off from the lock's server, to the heal).
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

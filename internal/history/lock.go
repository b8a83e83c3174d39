package history

import (
	"fmt"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
)

// The kinds of LockOp.
const (
	Grant   = "grant"   // the process obtained the lock (Token: the grant's value)
	Release = "release" // the process released it
	Loss    = "loss"    // the process was told it lost the lock (its watchdog, a failed renewal)
	Write   = "write"   // the process wrote what the lock guards, under the grant's fence
	// Read and Fault are for the lock timeline: CheckLocks leaves them out.
	Read  = "read"  // the process read what the lock guards, under the grant's fence
	Fault = "fault" // a fault done to the process (LockOp.Fault), from Invoke to Complete
)

// CheckLocks checks lock operations against a fenced mutex, writing porcupine's page to dir
// ("": a temporary one) unless linearizable. It fails on a malformed history or an unwritten page.
func CheckLocks(ops []LockOp, timeout time.Duration, dir string) (Result, error) {
	begun := time.Now()
	clients := map[string]int{}
	var history []porcupine.Operation
	dropped := 0
	for i, op := range ops {
		if err := validLockOp(op); err != nil {
			return Result{}, fmt.Errorf("lock operation %d: %w", i, err)
		}
		if op.Kind == Read || op.Kind == Fault {
			continue // not the lock's: for the timeline, not counted as dropped
		}
		if op.Kind == Loss || op.Outcome == Fail || op.Kind == Write && op.Outcome == Unknown {
			dropped++
			continue
		}
		id, ok := clients[op.Process]
		if !ok {
			id = len(clients)
			clients[op.Process] = id
		}
		ret := nanos(op.Complete)
		if op.Outcome == Unknown {
			ret = never
		}
		history = append(history, porcupine.Operation{
			ClientId: id, Input: op, Call: op.Invoke.UnixNano(), Output: op.Outcome, Return: ret,
		})
	}
	return check(lockModel, history, dropped, nil, begun, timeout, dir, "locks")
}

func validLockOp(op LockOp) error {
	switch {
	case !slices.Contains([]string{Grant, Release, Loss, Write, Read, Fault}, op.Kind):
		return fmt.Errorf("unknown kind %q", op.Kind)
	case !slices.Contains([]string{OK, Fail, Unknown}, op.Outcome):
		return fmt.Errorf("unknown outcome %q", op.Outcome)
	case op.Invoke.IsZero():
		return fmt.Errorf("%s by %s has no invoke time", op.Kind, op.Process)
	case op.Outcome != Unknown && op.Complete.IsZero():
		return fmt.Errorf("%s by %s is %s but has no completion time", op.Kind, op.Process, op.Outcome)
	case !op.Complete.IsZero() && op.Complete.Before(op.Invoke):
		return fmt.Errorf("%s by %s completes before its invoke", op.Kind, op.Process)
	}
	return nil
}

// lockModel is the fenced mutex of CheckLocks. Its state is the holder's token, "" for none.
var lockModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		return partition(history, func(op porcupine.Operation) string { return op.Input.(LockOp).Key })
	},
	Init: func() any { return "" },
	Step: func(state, input, _ any) (bool, any) {
		holder, op := state.(string), input.(LockOp)
		switch op.Kind {
		case Grant:
			return true, op.Token
		case Release:
			if holder == op.Token {
				return true, ""
			}
			return true, holder
		default: // an OK write
			return op.Token != "" && holder == op.Token, holder
		}
	},
	DescribeOperation: func(input, output any) string {
		op := input.(LockOp)
		s := fmt.Sprintf("%s %s %s", op.Process, op.Kind, op.Token)
		if op.Fence != 0 {
			s += fmt.Sprintf(" fence %d", op.Fence)
		}
		return s + " → " + output.(string)
	},
	DescribeState: func(state any) string {
		if state.(string) == "" {
			return "free"
		}
		return "held by " + state.(string)
	},
}

// partition splits history by key, keeping the order of each part.
func partition[K comparable](history []porcupine.Operation, key func(porcupine.Operation) K) [][]porcupine.Operation {
	index := map[K]int{}
	var parts [][]porcupine.Operation
	for _, op := range history {
		k := key(op)
		i, ok := index[k]
		if !ok {
			i = len(parts)
			index[k] = i
			parts = append(parts, nil)
		}
		parts[i] = append(parts[i], op)
	}
	return parts
}

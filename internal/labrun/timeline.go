package labrun

import (
	"strconv"
	"time"

	"github.com/seckill/seckill/internal/history"
)

// recordFault appends to the run's lock history the fault done to the API process pid (0:
// none in particular, as a failover under a lock without a key) while the cell's lock was
// key, from from to to: the window the lock timeline draws in that process's lane
// (internal/timeline). A history that cannot be written is only logged: the cell's verdict
// does not depend on it.
func (r *run) recordFault(key string, pid int, fault string, from, to time.Time) {
	process := ""
	if pid > 0 {
		process = strconv.Itoa(pid) // as the processes name themselves (cmd/api's LOCK_HISTORY)
	}
	f, err := history.CreateLockFile(lockHistory(r.historyDir), process)
	if err == nil {
		f.Record(history.LockOp{Kind: history.Fault, Key: key, Fault: fault, Invoke: from, Complete: to, Outcome: history.OK})
		err = f.Close()
	}
	if err != nil {
		r.logf("lock history: the %s fault: %v", fault, err)
	}
}

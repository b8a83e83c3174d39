package labapi

import (
	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/lab"
	"github.com/seckill/seckill/internal/order"
)

// The teaching strategies this package plugs in.
const (
	// Naive reads, checks and writes the stock with no lock: it oversells.
	Naive inventory.Strategy = "naive"
	// Lab is the oversell lab's: the product's lab lock (internal/lab) alone guards its stock.
	Lab inventory.Strategy = "lab"
)

// Options tune what Plug adds.
type Options struct {
	// LockHistory, when set, records every grant, write, loss and release of the product
	// locks (the dlock strategy's and the lab's); nil: off.
	LockHistory history.Recorder
}

// Plug returns the app.Config.Plug of the lab build: the naive and lab strategies, the
// think_ms pause and, with opts.LockHistory, the lock history.
func Plug(opts Options) func(app.Parts) app.Plugins {
	return func(parts app.Parts) app.Plugins {
		h := newLockHistory(opts.LockHistory)
		locks := &labLocks{rdb: parts.Redis, etcd: parts.Etcd, pg: parts.DB, zk: parts.ZooKeeper}
		p := app.Plugins{
			Strategies: map[inventory.Strategy]app.Plugged{
				Naive: {Strategy: naive{}},
				Lab:   {Strategy: &labBuyer{locks: locks, keys: parts.Keys, history: h, log: parts.Logger}, Check: checkLab},
			},
			Think: Thinker{},
			Close: locks.Close,
		}
		if h != nil {
			p.Locks = func(l order.Locker) order.Locker { return recordedLocker{Locker: l, h: h} }
		}
		return p
	}
}

// checkLab checks a lab product's lock and lease by the lab's own rules (lab.Check).
func checkLab(np inventory.NewProduct) error { return lab.Check(np.LabLock, np.LeaseMS) }

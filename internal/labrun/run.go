package labrun

import (
	"context"
	"errors"
	"fmt"

	"github.com/seckill/seckill/internal/procs"
)

// How a run goes through its cells and what it does with its processes between and after them.

// cells starts the run's processes and runs its cells in order, adding each to res. Its
// error is for a process that could not be started, signalled or partitioned.
func (r *run) cells(ctx context.Context, res *Result) error {
	if err := r.startZooKeeper(); err != nil {
		return err
	}
	if err := r.startAPIs(); err != nil {
		return err
	}
	for i, p := range r.cfg.Cells {
		if ctx.Err() != nil {
			return nil
		}
		label := fmt.Sprintf("%d/%d %s × %s", i+1, len(r.cfg.Cells), p.Lock, p.Scenario)
		r.progress("%s ...", label)
		if w := r.cfg.Watch; w != nil {
			s, _ := cellScenario(p)
			w.CellBegan(p, s.Stock, Expected[p.Lock][p.Scenario])
		}
		var c Cell
		var err error
		if s, _ := cellScenario(p); s.Fault == "failover" && !isZooKeeper(p.Lock) {
			if serr := r.onSentinels(func() error { c, err = r.cell(ctx, p, label); return err }); serr != nil && err == nil {
				c = Cell{Lock: p.Lock, Scenario: p.Scenario, Expected: Expected[p.Lock][p.Scenario], Error: serr.Error()}
			}
		} else {
			c, err = r.cell(ctx, p, label)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
		res.Cells = append(res.Cells, c)
		if w := r.cfg.Watch; w != nil {
			w.CellDone(c)
		}
		mark := "as expected"
		if !c.OK() {
			mark = "NOT AS EXPECTED (" + c.Expected + ")"
		}
		r.progress("%s: %s, %s, %.1fs\n", label, c, mark, c.Seconds)
		if err := r.heal(); err != nil {
			return err
		}
	}
	return nil
}

// close stops the run's processes, then removes their namespaces; its error says which
// process did not stop cleanly or reported a data race (whose log goes to cfg.Logf).
func (r *run) close() error {
	err := r.closeAPIs(append(r.retired, r.apis...))
	r.apis, r.retired = nil, nil
	for _, p := range r.netns {
		err = errors.Join(err, p.ns.Close())
	}
	r.netns = nil
	if r.zk != nil {
		err = errors.Join(err, r.zk.Close())
		r.zk = nil
	}
	return err
}

// closeAPIs stops apis, and logs (cfg.Logf) the tail of the log of each that did not stop
// cleanly.
func (r *run) closeAPIs(apis []*procs.API) error {
	var errs []error
	for _, a := range apis {
		if err := a.Close(); err != nil {
			errs = append(errs, err)
			r.logf("%s log (last lines):\n%s", a.Name, a.Log.Tail(40))
		}
	}
	return errors.Join(errs...)
}

func (r *run) logf(format string, args ...any) {
	if r.cfg.Logf != nil {
		r.cfg.Logf(format, args...)
	}
}

// heal brings the processes back to three running ones, a killed one started again, with
// no partition left, and a killed ZooKeeper member started again.
func (r *run) heal() error {
	if err := r.healNetns(); err != nil {
		return err
	}
	if err := r.healZooKeeper(); err != nil {
		return err
	}
	for i, a := range r.apis {
		if a.Exited() {
			if err := r.startAPI(i); err != nil {
				return err
			}
		}
	}
	return nil
}

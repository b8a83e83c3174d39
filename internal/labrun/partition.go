package labrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/procs"
)

// The partition scenario cuts the process that holds a product's lock off from the lock's
// server (Redis; etcd for the etcd lock) and from nothing else: its work goes on and it still
// reaches PostgreSQL, so a holder that does not learn of its loss in time writes after
// another process took the lock (Kleppmann's example, caused by the network instead of a
// pause). For that, when a run has a partition cell, its three processes run each in a
// network namespace of its own (procs.StartNetns, which needs root, ip and nft), reaching
// PostgreSQL, Redis and etcd through forwarders that the cell can cut it off from.

// netnsProc is the namespace of one of the run's processes.
type netnsProc struct {
	ns    *procs.Netns
	env   map[string]string // the run's env, with the forwarders' addresses
	pg    string            // the forwarder to PostgreSQL, which probes (postgresProbe)
	redis string            // the forwarder to Redis
	etcd  []string          // the forwarders to etcd's endpoints
	zk    []string          // the forwarders to ZooKeeper's members
}

// hasPartition reports whether one of cells is a partition cell.
func hasPartition(cells []Pair) bool {
	for _, p := range cells {
		if s, _ := cellScenario(p); s.Fault == "partition" {
			return true
		}
	}
	return false
}

// startAPIs starts the run's three processes, each in a namespace of its own when a cell
// needs it and namespaces can be made here (otherwise r.netnsErr says why not).
func (r *run) startAPIs() (err error) {
	if !hasPartition(r.cfg.Cells) {
		r.apis, err = procs.StartAPIs(r.cfg.APIBin, 3, r.env)
		return err
	}
	if r.netnsErr = procs.NetnsSupported(); r.netnsErr != nil {
		r.apis, err = procs.StartAPIs(r.cfg.APIBin, 3, r.env)
		return err
	}
	for i := range 3 {
		p, err := r.newNetnsProc()
		if err != nil {
			return err
		}
		r.netns = append(r.netns, p)
		a, err := procs.LaunchAPIIn(p.ns, r.cfg.APIBin, fmt.Sprintf("api%d", i+1), p.env)
		if err != nil {
			return err
		}
		r.apis = append(r.apis, a)
	}
	for _, a := range r.apis {
		if err := a.WaitReady("/readyz"); err != nil {
			return err
		}
	}
	return nil
}

// startAPI starts process i again, in its namespace if it has one. The one it replaces has
// exited; it is closed with the others (a data race its log shows fails the run then).
func (r *run) startAPI(i int) error {
	r.retired = append(r.retired, r.apis[i])
	var a *procs.API
	var err error
	if r.netns == nil {
		a, err = procs.StartAPI(r.cfg.APIBin, r.apis[i].Name, r.env)
	} else {
		a, err = procs.StartAPIIn(r.netns[i].ns, r.cfg.APIBin, r.apis[i].Name, r.netns[i].env)
	}
	if err != nil {
		return err
	}
	r.apis[i] = a
	return nil
}

// newNetnsProc makes a namespace with forwarders to the run's PostgreSQL, Redis and etcd.
func (r *run) newNetnsProc() (_ *netnsProc, err error) {
	ns, err := procs.StartNetns("lab")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ns.Close())
		}
	}()
	p := &netnsProc{ns: ns, env: maps.Clone(r.env)}
	u, err := url.Parse(r.env["DATABASE_URL"])
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("the partition scenario needs a postgres:// URL as DATABASE_URL: %v", err)
	}
	if p.pg, err = ns.ForwardProbing(u.Host, postgresProbe); err != nil {
		return nil, err
	}
	u.Host = p.pg
	p.env["DATABASE_URL"] = u.String()
	if p.redis, err = ns.Forward(r.env["REDIS_ADDR"]); err != nil {
		return nil, err
	}
	p.env["REDIS_ADDR"] = p.redis
	if eps := r.env["ETCD_ENDPOINTS"]; eps != "" {
		var fwd []string
		for _, ep := range strings.Split(eps, ",") {
			e, err := url.Parse(strings.TrimSpace(ep))
			if err != nil || e.Host == "" {
				return nil, fmt.Errorf("ETCD_ENDPOINTS %q: want URLs (http://host:port): %v", ep, err)
			}
			if e.Host, err = ns.Forward(e.Host); err != nil {
				return nil, err
			}
			p.etcd = append(p.etcd, e.Host)
			fwd = append(fwd, e.String())
		}
		p.env["ETCD_ENDPOINTS"] = strings.Join(fwd, ",")
	}
	if r.zk != nil {
		for _, m := range r.zk.Servers() {
			fwd, err := ns.Forward(m)
			if err != nil {
				return nil, err
			}
			p.zk = append(p.zk, fwd)
		}
		p.env["ZOOKEEPER_SERVERS"] = strings.Join(p.zk, ",")
	}
	return p, nil
}

// partition cuts the process that holds key off from the lock's server for s.Pause, then
// heals, and says what it did. It waits (up to 2 s) for a new holder, so that the cut lands
// at the start of its work; a lock whose value does not change from one holding to the next
// (setnx, del) is cut wherever its holder is. The postgres locks' holder, cut off from
// PostgreSQL itself, is cut once it has read the stock (partitionTarget). Its error is for
// a partition that could not be made or healed.
func (r *run) partition(ctx context.Context, s Scenario, lock, key string) (string, error) {
	if r.netns == nil {
		return "no fault: " + r.netnsErr.Error(), nil
	}
	if lock == "none" || lock == "mutex" {
		return "no fault: this lock has no server to cut its holder off from", nil
	}
	prev := r.rdb.Get(ctx, key).Val()
	nctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	for nctx.Err() == nil {
		if v := r.rdb.Get(nctx, key).Val(); v != "" && v != prev {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	a, err := r.partitionTarget(hctx, lock, key)
	if err != nil {
		return "no fault: " + err.Error(), nil
	}
	i := slices.Index(r.apis, a) // holder returns one of r.apis
	p, from, cut := r.netns[i], "Redis (not from PostgreSQL)", []string{}
	cut = append(cut, p.redis)
	switch {
	case lock == "etcd":
		from, cut = "etcd (not from PostgreSQL)", p.etcd
	case isZooKeeper(lock):
		from, cut = "ZooKeeper (not from PostgreSQL)", p.zk
	case isPostgres(lock):
		from, cut = "PostgreSQL, its lock's session and its reads and writes alike, once it had read the stock,", []string{p.pg}
	}
	if err := p.ns.Partition(cut...); err != nil {
		return "", err
	}
	cutAt := time.Now()
	select {
	case <-time.After(s.Pause):
	case <-ctx.Done():
	}
	if err := p.ns.Heal(); err != nil {
		return "", err
	}
	r.recordFault(key, a.Pid(), history.FaultPartition, cutAt, time.Now())
	return fmt.Sprintf("%s (pid %d), holding %s, cut off from %s for %v, then healed",
		a.Name, a.Pid(), key, from, s.Pause), nil
}

// partitionTarget finds the process that holds key: for the postgres locks, once it has
// read the stock under it (see partition).
func (r *run) partitionTarget(ctx context.Context, lock, key string) (*procs.API, error) {
	want := func(pttl time.Duration) bool { return pttl != -2 }
	tl := newTail(lockHistory(r.historyDir), key)
	for {
		a, err := holder(ctx, r.rdb, key, r.apis, want)
		if err != nil || !isPostgres(lock) {
			return a, err
		}
		if ok, err := r.thinking(ctx, tl, key, a, want); err != nil || ok {
			return a, err
		}
	}
}

// healNetns lifts any partition left (a cell that ended mid-fault).
func (r *run) healNetns() error {
	var errs []error
	for _, p := range r.netns {
		errs = append(errs, p.ns.Heal())
	}
	return errors.Join(errs...)
}

// PartitionSupported says why the partition scenario cannot run here (it needs root, ip and
// nft), or nil.
func PartitionSupported() error { return procs.NetnsSupported() }

package inventory

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// The scripts of the sold-out marks (lua/soldout_*.lua), each after the prelude that names
// the data set Redis serves (lua/soldout_ident.lua).
var (
	soldOutMarkScript    = soldOutScript("mark")
	soldOutPromoteScript = soldOutScript("promote")
	soldOutForgetScript  = soldOutScript("forget")
	soldOutCheckScript   = soldOutScript("check")
	soldOutLiftScript    = soldOutScript("lift")
)

func soldOutScript(name string) *redis.Script {
	prelude, err := lua.ReadFile("lua/soldout_ident.lua")
	if err != nil {
		panic("inventory: " + err.Error())
	}
	src, err := lua.ReadFile("lua/soldout_" + name + ".lua")
	if err != nil {
		panic("inventory: " + err.Error())
	}
	return redis.NewScript(string(prelude) + string(src))
}

// idleAfter is how long a mark nobody asked about is kept confirmed: past it, it is dropped,
// and the next buyer of the product reads PostgreSQL (and marks it again).
const idleAfter = time.Minute

// Listen runs Keep and follows other processes' marks and lifts until ctx ends.
func (s *SoldOut) Listen(ctx context.Context) {
	if err := s.conn.reserve(ctx); err != nil { // else the first mark takes it
		s.log.WarnContext(ctx, "no connection reserved for sold-out marks yet", "err", err)
	}
	defer s.conn.release()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		listenIDs(ctx, s.rdb, s.keys.SoldOutChannel(), func(id int64) { s.adopt(ctx, id) })
	}()
	go func() { defer wg.Done(); listenIDs(ctx, s.rdb, s.keys.SoldOutLiftChannel(), s.drop) }()
	s.Keep(ctx)
	wg.Wait()
}

// Keep confirms the recently used marks every quarter lease until ctx ends.
func (s *SoldOut) Keep(ctx context.Context) {
	t := time.NewTicker(s.lease / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.refresh(ctx)
		}
	}
}

// refresh is one round of Keep.
func (s *SoldOut) refresh(ctx context.Context) {
	round := s.round.Add(1)
	idle := int64(idleAfter / (s.lease / 4))
	type check struct {
		id    int64
		value string
		cmd   *redis.Cmd
	}
	var checks []check
	s.local.Range(func(k, v any) bool {
		if m := v.(*mark); round-m.used.Load() > idle {
			s.forget(k.(int64), m.value)
		} else {
			checks = append(checks, check{id: k.(int64), value: m.value})
		}
		return true
	})
	now := s.now()
	s.tries.Range(func(k, v any) bool {
		if now-v.(*atomic.Int64).Load() > int64(s.lease) {
			s.tries.Delete(k)
		}
		return true
	})
	if len(checks) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.lease)
	defer cancel()
	pipe := s.rdb.Pipeline()
	for i := range checks {
		checks[i].cmd = pipe.EvalSha(ctx, soldOutCheckScript.Hash(), []string{s.keys.SoldOut(checks[i].id)}, checks[i].value)
	}
	from := s.now()
	_, _ = pipe.Exec(ctx) // each command has its error
	for _, c := range checks {
		n, err := c.cmd.Int()
		switch {
		case err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT"):
			_ = soldOutCheckScript.Load(ctx, s.rdb).Err() // for the next round
			return
		case err != nil: // unconfirmed: it expires
		case n == 1:
			s.confirm(c.id, c.value, from, false)
		default:
			s.forget(c.id, c.value)
		}
	}
}

// adopt takes product id's mark from Redis, announced by another process: a copy trusted
// for a lease from the start of the round trip that found it.
func (s *SoldOut) adopt(ctx context.Context, id int64) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	from := s.now()
	v, err := soldOutCheckScript.Run(ctx, s.rdb, []string{s.keys.SoldOut(id)}, "").Text()
	if err == nil {
		s.confirm(id, v, from, true)
	}
}

package httpapi

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed gcra.lua
var gcraSrc string

var gcraScript = redis.NewScript(gcraSrc)

// checkTimeout bounds one batch's call to Redis. A batch that takes longer fails open, like
// any limiter failure.
const checkTimeout = time.Second

// check is one rate limit check: a key and its Rate in, the verdict out.
type check struct {
	ctx  context.Context // the request's: a cancelled request's failure is not logged
	key  string
	rate Rate

	ok   bool          // allowed (and spent)
	wait time.Duration // when refused: the wait before a request would be allowed
	err  error         // Redis did not answer: the check fails open

	done chan bool // true: lead the next batch; false: answered
}

// checkBatches runs the rate limit checks of concurrent requests in batches, the way buyers
// share a transaction under a product's lock: one call to Redis (gcra.lua) is in flight at a
// time; the checks that arrive meanwhile queue, and the first of them leads the next call
// with all of them. A lone check goes out at once. Against one call per check, auto-pipelined
// (what redis_rate allows), Redis runs one script per batch instead of one per request
// (BenchmarkLimiterAllow). On a Redis Cluster the keys of a batch lie in different slots, so a
// batch is one pipeline of one call per key there.
type checkBatches struct {
	rdb     redis.UniversalClient
	cluster bool

	mu    sync.Mutex
	queue []*check
	busy  bool // a batch is being run
}

func newCheckBatches(rdb redis.UniversalClient) *checkBatches {
	_, cluster := rdb.(*redis.ClusterClient)
	return &checkBatches{rdb: rdb, cluster: cluster}
}

// do answers c: in a batch that another check leads, or in one that c leads.
func (b *checkBatches) do(c *check) {
	c.done = make(chan bool, 1)
	b.mu.Lock()
	b.queue = append(b.queue, c)
	lead := !b.busy
	b.busy = true
	b.mu.Unlock()
	if !lead && !<-c.done {
		return
	}
	b.mu.Lock()
	batch := b.queue
	b.queue = nil
	b.mu.Unlock()
	defer b.handOff(batch, c) // also if run panics: the others must not wait for ever
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), checkTimeout)
	defer cancel()
	b.run(ctx, batch)
}

// handOff wakes the checks of batch but its leader, and makes the first queued check the
// next leader, or marks the batches idle.
func (b *checkBatches) handOff(batch []*check, leader *check) {
	b.mu.Lock()
	var next *check
	if len(b.queue) > 0 {
		next = b.queue[0]
	} else {
		b.busy = false
	}
	b.mu.Unlock()
	for _, o := range batch {
		if o != leader {
			o.done <- false
		}
	}
	if next != nil {
		next.done <- true
	}
}

// errUnanswered is the verdict of a check whose batch ended without one (a bug): it fails
// open.
var errUnanswered = errors.New("rate limit check: no verdict")

// run answers every check of batch, all failing open with the error if Redis does not
// answer. A script Redis does not know (after a restart) is loaded and the batch run again.
func (b *checkBatches) run(ctx context.Context, batch []*check) {
	for _, c := range batch {
		c.err = errUnanswered
	}
	err := b.call(ctx, batch)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		if err = gcraScript.Load(ctx, b.rdb).Err(); err == nil {
			err = b.call(ctx, batch)
		}
	}
	if err != nil {
		for _, c := range batch {
			c.err = err
		}
	}
}

// call sends batch as one gcra.lua call (a pipeline of one call per check on a Redis
// Cluster) and reads the verdicts.
func (b *checkBatches) call(ctx context.Context, batch []*check) error {
	groups := [][]*check{batch}
	if b.cluster {
		groups = make([][]*check, len(batch))
		for i := range batch {
			groups[i] = batch[i : i+1]
		}
	}
	cmds := make([]*redis.Cmd, len(groups))
	_, err := b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, g := range groups {
			keys := make([]string, len(g))
			args := make([]any, 0, 3*len(g))
			for j, c := range g {
				keys[j] = c.key
				args = append(args, c.rate.N, c.rate.N, c.rate.Per.Seconds())
			}
			cmds[i] = gcraScript.EvalSha(ctx, p, keys, args...)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, g := range groups {
		if err := readVerdicts(cmds[i], g); err != nil {
			return err
		}
	}
	return nil
}

// readVerdicts reads gcra.lua's answer to the checks of g.
func readVerdicts(cmd *redis.Cmd, g []*check) error {
	vals, err := cmd.Slice()
	if err != nil {
		return err
	}
	if len(vals) != 2*len(g) {
		return fmt.Errorf("rate limit script: %d values for %d checks", len(vals), len(g))
	}
	for j, c := range g {
		allowed, _ := vals[2*j].(int64)
		text, _ := vals[2*j+1].(string)
		secs, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return errors.New("rate limit script: bad wait " + strconv.Quote(text))
		}
		c.ok, c.wait, c.err = allowed == 1, time.Duration(secs*float64(time.Second)), nil
	}
	return nil
}

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
	key  string
	rate Rate

	ok   bool          // allowed (and spent)
	wait time.Duration // when refused: the wait before a request would be allowed
	err  error         // Redis did not answer: the check fails open

	done chan bool // true: lead the next batch; false: answered
}

// checkBatches runs the rate limit checks of concurrent requests in batches, as group commit does
// for buyers: one gcra.lua call is in flight at a time, the checks that arrive meanwhile queue,
// and the first of them leads the next call with all of them (on a Redis Cluster, a pipeline of
// one call per key). See docs/abuse-limits.md.
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

// do answers c: in a batch that another check leads, or in one that c leads, on ctx (the
// request's) without its cancellation: the batch serves others too.
func (b *checkBatches) do(ctx context.Context, c *check) {
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
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkTimeout)
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

// errUnanswered is the verdict of a check whose batch ended without one: it fails open.
var errUnanswered = errors.New("rate limit check: no verdict")

// run answers the checks of batch; those Redis gave no verdict for fail open with its error.
// The calls Redis did not run because it does not know the script (after a restart or
// SCRIPT FLUSH) are made again once it is loaded, and only those: on a Redis Cluster the other
// nodes' calls ran, and spent their budgets.
func (b *checkBatches) run(ctx context.Context, batch []*check) {
	for _, c := range batch {
		c.err = errUnanswered
	}
	groups := [][]*check{batch}
	if b.cluster { // the keys of a batch lie in different slots: one call per key
		groups = make([][]*check, len(batch))
		for i := range batch {
			groups[i] = batch[i : i+1]
		}
	}
	unknown, err := b.call(ctx, groups)
	if len(unknown) > 0 {
		if err = gcraScript.Load(ctx, b.rdb).Err(); err == nil {
			_, err = b.call(ctx, unknown)
		}
	}
	if err != nil {
		for _, c := range batch {
			if c.err == errUnanswered {
				c.err = err
			}
		}
	}
}

// call sends one gcra.lua call per group in one pipeline and reads their verdicts. It
// returns the groups whose call Redis did not run for want of the script, and the error of
// the others that got no verdict, if any.
func (b *checkBatches) call(ctx context.Context, groups [][]*check) (unknown [][]*check, err error) {
	cmds := make([]*redis.Cmd, len(groups))
	// Each command carries its own error, the pipeline's included.
	_, _ = b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
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
	for i, g := range groups {
		switch cerr := readVerdicts(cmds[i], g); {
		case cerr == nil:
		case redis.HasErrorPrefix(cerr, "NOSCRIPT"):
			unknown = append(unknown, g)
		default:
			err = cerr
		}
	}
	return unknown, err
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

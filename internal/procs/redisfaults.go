package procs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// The faults a redis-server of the caller's own can be made to answer with, for real: each makes
// the server reply with one class of error until the fault is lifted (or ends by itself).

// RedisFault is one fault made on a Redis. It is not safe for concurrent use.
type RedisFault struct {
	// Ended is closed when a self-ending fault ends; nil for one that lasts until Lift.
	Ended <-chan struct{}
	err   *error
	lift  func() error
}

// Err is the error of the command behind a fault that ends by itself, once Ended is closed.
func (f *RedisFault) Err() error {
	if f.err == nil {
		return nil
	}
	return *f.err
}

// Lift undoes the fault, waiting first for a self-ending one.
func (f *RedisFault) Lift() error {
	if f.Ended != nil {
		<-f.Ended
	}
	return f.lift()
}

// ConfigSet sets configuration parameters (name, value, ...).
func (s *Redis) ConfigSet(nameValues ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer rdb.Close()
	for i := 0; i+1 < len(nameValues); i += 2 {
		if err := rdb.ConfigSet(ctx, nameValues[i], nameValues[i+1]).Err(); err != nil {
			return fmt.Errorf("CONFIG SET %s %s on %s: %w", nameValues[i], nameValues[i+1], s.Addr, err)
		}
	}
	return nil
}

// Do runs one command on database db (10 s at most).
func (s *Redis) Do(db int, args ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.do(ctx, db, args...)
}

func (s *Redis) do(ctx context.Context, db int, args ...any) error {
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, DB: db, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Do(ctx, args...).Err(); err != nil {
		return fmt.Errorf("%v on %s: %w", args, s.Addr, err)
	}
	return nil
}

// OutOfMemory makes every write answer OOM.
func (s *Redis) OutOfMemory() (*RedisFault, error) {
	if err := s.ConfigSet("maxmemory-policy", "noeviction", "maxmemory", "1"); err != nil {
		return nil, err
	}
	return &RedisFault{lift: func() error { return s.ConfigSet("maxmemory", "0") }}, nil
}

// ReplicaOfSilentMaster makes the server a replica of a silent master: writes get READONLY, or
// everything MASTERDOWN unless serveStale.
func (s *Redis) ReplicaOfSilentMaster(serveStale bool) (*RedisFault, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	stale := map[bool]string{true: "yes", false: "no"}[serveStale]
	if err := s.ConfigSet("replica-serve-stale-data", stale); err != nil {
		return nil, errors.Join(err, ln.Close())
	}
	if err := s.Do(0, "REPLICAOF", host, port); err != nil {
		return nil, errors.Join(err, ln.Close())
	}
	return &RedisFault{lift: func() error {
		defer ln.Close()
		if err := s.Do(0, "REPLICAOF", "NO", "ONE"); err != nil {
			return err
		}
		return s.ConfigSet("replica-serve-stale-data", "yes")
	}}, nil
}

// spinScript runs for ARGV[1] µs of server time, in a loop bounded in count as well.
const spinScript = `local t = redis.call('TIME')
local start = t[1] * 1000000 + t[2]
for i = 1, 100000000 do
	t = redis.call('TIME')
	if t[1] * 1000000 + t[2] - start >= tonumber(ARGV[1]) then return i end
end
return -1`

// Busy makes every command answer BUSY for about d.
func (s *Redis) Busy(d time.Duration) (*RedisFault, error) {
	if err := s.ConfigSet("busy-reply-threshold", "50"); err != nil {
		return nil, err
	}
	f := s.background("EVAL", spinScript, 0, d.Microseconds())
	f.lift = func() error { return s.ConfigSet("busy-reply-threshold", "5000") }
	return f, nil
}

// Loading makes every command answer LOADING for about keys/10,000 seconds, keeping every key.
// The server needs --enable-debug-command yes.
func (s *Redis) Loading(keys int) (*RedisFault, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer rdb.Close()
	if v, _ := rdb.ConfigGet(ctx, "key-load-delay").Result(); v["key-load-delay"] == "" {
		return nil, errors.New("this redis-server has no key-load-delay setting (Redis 7 has)")
	}
	if err := s.Do(9, "DEBUG", "POPULATE", keys, "filler"); err != nil {
		return nil, err
	}
	if err := s.ConfigSet("key-load-delay", "100", "loading-process-events-interval-bytes", "1024"); err != nil {
		return nil, err
	}
	f := s.background("DEBUG", "RELOAD")
	f.lift = func() error { return s.ConfigSet("key-load-delay", "0") }
	return f, nil
}

// background runs one long command on a connection of its own and returns a fault that ends
// when it returns.
func (s *Redis) background(args ...any) *RedisFault {
	done, err := make(chan struct{}), new(error)
	go func() {
		defer close(done)
		rdb := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, ReadTimeout: 20 * time.Second})
		defer rdb.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
		defer cancel()
		if e := rdb.Do(ctx, args...).Err(); e != nil {
			*err = fmt.Errorf("%v: %w", args[0], e)
		}
	}()
	return &RedisFault{Ended: done, err: err}
}

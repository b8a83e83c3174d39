package procs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A redis-server whose wall clock its caller steps, as NTP (or an operator) steps a host's clock:
// redis-server runs under libfaketime (Debian's faketime package), preloaded with a relative
// offset read from a file on every call to the clock (FAKETIME_TIMESTAMP_FILE,
// FAKETIME_NO_CACHE), so a step lands at the server's next clock read. Only the wall clock is
// offset (gettimeofday, clock_gettime(CLOCK_REALTIME), time: what Redis's TIME, key expiry and
// Lua's TIME read); the monotonic clock is left alone (FAKETIME_DONT_FAKE_MONOTONIC), as a
// real step leaves it.
//
// Debian's redis-server allocates with the system's libjemalloc, which cannot run under
// libfaketime: jemalloc reads the clock while it initializes, before libfaketime is ready,
// and the process hangs (wolfcw/libfaketime#130, open since 0.9.7). So glibc is preloaded
// after libfaketime: its malloc is found before jemalloc's, redis-server allocates with it,
// and jemalloc only answers INFO's allocator statistics (which are then meaningless).

// FaketimeLib returns the path of libfaketime.so.1, or an error wrapping ErrUnavailable.
func FaketimeLib() (string, error) {
	for _, pattern := range []string{"/usr/lib/*/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1",
		"/usr/local/lib/faketime/libfaketime.so.1"} {
		if found, _ := filepath.Glob(pattern); len(found) > 0 {
			return found[0], nil
		}
	}
	return "", unavailable("libfaketime not found: a redis-server's clock is stepped (`make up` installs Debian's faketime)")
}

// RedisClock is a redis-server's wall clock: the real one plus an offset kept across restarts.
// Safe for concurrent use.
type RedisClock struct {
	s    *Redis
	file string // FAKETIME_TIMESTAMP_FILE

	mu     sync.Mutex
	offset time.Duration
}

// StartRedisFakeClock is StartRedis with a RedisClock, at offset 0.
func StartRedisFakeClock(extra ...string) (*Redis, *RedisClock, error) {
	lib, err := FaketimeLib()
	if err != nil {
		return nil, nil, err
	}
	var c *RedisClock
	s, err := startRedis(func(s *Redis) error {
		c = &RedisClock{s: s, file: filepath.Join(s.Dir, "faketimerc")}
		if err := c.write(0); err != nil {
			return err
		}
		s.env = append(os.Environ(),
			"LD_PRELOAD="+lib+" libc.so.6", // glibc's malloc, not jemalloc's: see above
			"FAKETIME_TIMESTAMP_FILE="+c.file, "FAKETIME_NO_CACHE=1", "FAKETIME_DONT_FAKE_MONOTONIC=1")
		s.exited = removeFaketimeShm
		return nil
	}, extra...)
	if err != nil {
		return nil, nil, err
	}
	skew, err := c.Skew()
	if err == nil && skew.Abs() > time.Second {
		err = fmt.Errorf("redis-server under libfaketime with offset 0 is %v off the real clock", skew)
	}
	if err != nil {
		return nil, nil, errors.Join(err, s.Close())
	}
	return s, c, nil
}

// Offset is how far the server's wall clock is set from the real one.
func (c *RedisClock) Offset() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset
}

// Step moves the server's clock by d, waits up to 5 s for TIME to show it, and returns when.
func (c *RedisClock) Step(d time.Duration) (time.Time, error) {
	c.mu.Lock()
	c.offset += d
	want := c.offset
	err := c.write(want)
	c.mu.Unlock()
	if err != nil {
		return time.Time{}, err
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		skew, err := c.Skew()
		if err != nil {
			return time.Time{}, err
		}
		if (skew - want).Abs() < 250*time.Millisecond {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("redis-server on %s: clock stepped to %v, but TIME is %v off the real clock", c.s.Addr, want, skew)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Skew returns the server's TIME less the real time, within half a round trip.
func (c *RedisClock) Skew() (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: c.s.Addr, MaxRetries: -1})
	defer rdb.Close()
	sent := time.Now()
	server, err := rdb.Time(ctx).Result()
	if err != nil {
		return 0, fmt.Errorf("TIME on %s: %w", c.s.Addr, err)
	}
	mid := sent.Add(time.Since(sent) / 2)
	return server.Sub(mid), nil
}

// write sets the offset libfaketime reads: "+5.000" or "-2.500" seconds. The file is
// replaced in one rename, so the server never reads it half written (an empty file would be
// no offset at all).
func (c *RedisClock) write(offset time.Duration) error {
	spec := strconv.FormatFloat(offset.Seconds(), 'f', 3, 64)
	if offset >= 0 {
		spec = "+" + spec
	}
	tmp := c.file + ".tmp"
	if err := os.WriteFile(tmp, []byte(spec+"\n"), 0o644); err != nil {
		return fmt.Errorf("faketime offset: %w", err)
	}
	if err := os.Rename(tmp, c.file); err != nil {
		return fmt.Errorf("faketime offset: %w", err)
	}
	return nil
}

// removeFaketimeShm removes the shared memory and semaphore that libfaketime made for the
// process pid, which a killed process leaves in /dev/shm: libfaketime refuses to start a later
// process that gets the same pid while they are there.
func removeFaketimeShm(pid int) {
	for _, name := range []string{"faketime_shm_", "sem.faketime_sem_"} {
		err := os.Remove("/dev/shm/" + name + strconv.Itoa(pid))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "launch: %v\n", err)
		}
	}
}

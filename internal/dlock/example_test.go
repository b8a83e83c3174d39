package dlock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
)

// The examples need a Redis server, so they are compiled but not run.

func ExampleClient_Obtain() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	locks := dlock.New(rdb, nil)
	defer locks.Close()

	l, err := locks.Obtain(ctx, "seckill:{p:42}:lock", 5*time.Second, &dlock.Options{Wait: time.Second})
	switch {
	case errors.Is(err, dlock.ErrNotObtained):
		fmt.Println("busy, try again later")
		return
	case err != nil:
		log.Fatal(err) // Redis is down, or a bad argument
	}
	defer l.Release(context.WithoutCancel(ctx))

	// Write under the lock, checking the fence where the data lives:
	// UPDATE products SET stock = stock - 1, fence = $2 WHERE id = $1 AND fence < $2
	fmt.Println("holding", l.Key(), "with fence", l.Fence())
}

func ExampleLock_Watch() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	locks := dlock.New(rdb, nil)
	defer locks.Close()

	l, err := locks.Obtain(ctx, "reports:{daily}:lock", 10*time.Second, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(context.WithoutCancel(ctx))

	// The watchdog renews the lock every ttl/3 for as long as the work runs,
	// and cancels ctx as soon as the lock is lost.
	ctx = l.Watch(ctx)
	select {
	case <-time.After(time.Minute): // long work, done in steps that watch ctx
	case <-ctx.Done():
		if errors.Is(context.Cause(ctx), dlock.ErrLost) {
			log.Print("lock lost, stopping: ", context.Cause(ctx))
		}
	}
}

func ExampleClient_Do() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	locks := dlock.New(rdb, nil)
	defer locks.Close()

	err := locks.Do(ctx, "seckill:{p:42}:lock", 5*time.Second, &dlock.Options{Wait: time.Second},
		func(ctx context.Context, l *dlock.Lock) error {
			// ctx is cancelled if the lock is lost; pass l down, do not
			// obtain the key again (the lock is not reentrant).
			return reserve(ctx, 42, l.Fence())
		})
	switch {
	case errors.Is(err, dlock.ErrNotObtained):
		fmt.Println("busy")
	case errors.Is(err, dlock.ErrLost):
		fmt.Println("lock lost while working; the fence check rejected stale writes")
	case err != nil:
		log.Fatal(err)
	}
}

func reserve(ctx context.Context, productID, fence int64) error { return ctx.Err() }

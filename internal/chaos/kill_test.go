//go:build linux

package chaos_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/testenv"
)

// TestKillOneAPI: one of three API processes is killed with SIGKILL while it holds the
// product's lock, inside its critical section (think_ms, then the write). Whatever it had
// not committed dies with its connections, its lock expires after LOCK_TTL (nobody can
// release it), and the two others finish the sale. Its buyers in flight get no answer.
func TestKillOneAPI(t *testing.T) {
	faultTest(t)
	b, rdb := sharedBackend(t)
	apis := b.startAPIs(t, 3, map[string]string{"LOCK_TTL": "500ms", "LOCK_WAIT": "1s"})
	victim, rest := apis[0], apis[1:]
	s := newSale(t, rest[0], b.dsn, product{strategy: "dlock", stock: 60, thinkMS: 20})

	s.start(6, apis...)
	s.waitBought(t, 10)
	// Move the load to the victim alone: once the others have nothing in flight, a lock
	// key that exists is the victim's, and the victim is inside its critical section.
	s.stopAll()
	s.start(3, victim)
	ctx := context.Background()
	key := b.keys().Lock(s.id)
	var token string
	testenv.Eventually(t, 10*time.Second, "the victim holds the product's lock", func() bool {
		token, _ = rdb.Get(ctx, key).Result()
		return token != ""
	})
	victim.Kill()
	killed := time.Now()
	s.start(6, rest...)

	testenv.Eventually(t, 10*time.Second, "the killed holder's lock to expire", func() bool {
		v, err := rdb.Get(ctx, key).Result()
		return errors.Is(err, redis.Nil) || v != token
	})
	t.Logf("killed %s holding the lock; its key was gone %v later (LOCK_TTL 500ms)",
		victim.Name, time.Since(killed).Round(time.Millisecond))
	s.finish(t, rest...)
	s.verify(t, rest[0], unansweredBy(victim))
}

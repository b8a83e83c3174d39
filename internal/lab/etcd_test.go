package lab_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/etcdlock"
	"github.com/seckill/seckill/internal/lab"
	"github.com/seckill/seckill/internal/testenv"
)

// TestEtcdLockLost: the etcd lock's holder works on a context that the end of its lease
// cancels (with etcdlock.ErrLost), and has the key's create revision as its fence; the next
// holder, in another process, has a larger one, and the late release of the first neither
// fails silently nor deletes the second's name tag in Redis.
func TestEtcdLockLost(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	cli := testenv.Etcd(t)
	first, second := etcdlock.New(cli, nil), etcdlock.New(testenv.Etcd(t), nil)
	t.Cleanup(func() { first.Close(); second.Close() })
	ctx := context.Background()
	key := prefix + ":{p:1}:lock"
	h, err := lab.New(rdb, lab.Clients{Etcd: first}).Acquire(ctx, "etcd", key, 2*time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if h.Fence <= 0 || h.Ctx.Err() != nil {
		t.Fatalf("held: fence %d, context %v", h.Fence, h.Ctx.Err())
	}
	if got, want := rdb.Get(ctx, key).Val(), lab.Owner(os.Getpid())+strconv.FormatInt(h.Fence, 10); got != want {
		t.Errorf("name tag %q, want %q", got, want)
	}
	// The lease ends as a paused holder's does: etcd revokes it.
	testenv.RevokeEtcdLock(t, ctx, cli, key)
	select {
	case <-h.Ctx.Done():
		if cause := context.Cause(h.Ctx); !errors.Is(cause, etcdlock.ErrLost) {
			t.Errorf("the holder's context ended with %v, want ErrLost", cause)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the holder's context was not cancelled within 10 s of its lease's end")
	}
	next, err := lab.New(rdb, lab.Clients{Etcd: second}).Acquire(ctx, "etcd", key, 2*time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Release(ctx)
	if next.Fence <= h.Fence {
		t.Errorf("next holder's fence %d, want more than %d", next.Fence, h.Fence)
	}
	if err := h.Release(ctx); !errors.Is(err, etcdlock.ErrLost) {
		t.Errorf("late release = %v, want ErrLost", err)
	}
	if tag := rdb.Get(ctx, key).Val(); !strings.HasSuffix(tag, ":"+strconv.FormatInt(next.Fence, 10)) {
		t.Errorf("after the late release the name tag is %q, want the next holder's", tag)
	}
}

// TestEtcdLockWithoutEtcd: in a process that has no etcd, the etcd lock fails with an error
// that says etcd is unavailable (not that the lock was not obtained), which names
// ETCD_ENDPOINTS. (internal/app's TestLabEtcdWithoutEtcd: the API answers it 503
// unavailable.)
func TestEtcdLockWithoutEtcd(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	_, err := lab.New(rdb, lab.Clients{}).Acquire(context.Background(), "etcd", prefix+":{p:1}:lock", time.Second, time.Second)
	if !errors.Is(err, lab.ErrNoEtcd) || !errors.Is(err, etcdlock.ErrUnavailable) ||
		errors.Is(err, etcdlock.ErrNotObtained) || !strings.Contains(err.Error(), "ETCD_ENDPOINTS") {
		t.Errorf("etcd lock without etcd = %v, want ErrNoEtcd, unavailable, naming ETCD_ENDPOINTS", err)
	}
}

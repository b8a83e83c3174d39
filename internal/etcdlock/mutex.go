package etcdlock

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// mutex is one goroutine's claim on a lock: the concurrency package's Mutex protocol (a key
// under the lock's name with the session's lease; the key created first holds the lock),
// except that a waiter watches its predecessor's key from the moment the watch is in place,
// and nothing runs without the caller's deadline: see docs/dependencies.md for the two
// faults of Mutex these avoid.
type mutex struct {
	s      *concurrency.Session
	pfx    string // the lock's name and "/"
	key    string // pfx and the lease in hex; empty until written
	rev    int64  // the key's create revision: the fence
	waited bool   // granted after waiting for an earlier holder
}

func newMutex(s *concurrency.Session, name string) *mutex { return &mutex{s: s, pfx: name + "/"} }

// errLocked is a try (no wait) that found the lock held by another session.
var errLocked = errors.New("held by another session")

// errKeyGone is a wait whose own key went meanwhile: its lease ended.
var errKeyGone = errors.New("the waiter's key is gone: its lease ended")

// lock writes the claim's key and, unless try, waits until every key created before it is
// gone. With try, a lock held by another session is errLocked and the key is removed.
func (m *mutex) lock(ctx context.Context, try bool) error {
	cli := m.s.Client()
	m.key = fmt.Sprintf("%s%x", m.pfx, m.s.Lease())
	first := clientv3.OpGet(m.pfx, clientv3.WithFirstCreate()...)
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(m.key), "=", 0)).
		Then(clientv3.OpPut(m.key, "", clientv3.WithLease(m.s.Lease())), first).
		Else(clientv3.OpGet(m.key), first).
		Commit()
	if err != nil {
		return err
	}
	m.rev = resp.Header.Revision
	if !resp.Succeeded { // the session wrote it before: a claim that was not cleaned up
		m.rev = resp.Responses[0].GetResponseRange().Kvs[0].CreateRevision
	}
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) == 0 || kvs[0].CreateRevision == m.rev {
		return nil
	}
	if try {
		if _, err := cli.Delete(ctx, m.key); err != nil {
			return err
		}
		m.key = ""
		return errLocked
	}
	m.waited = true
	return m.wait(ctx)
}

// wait waits until no key created before the claim's is left, then checks that the claim's
// own key is still there.
func (m *mutex) wait(ctx context.Context) error {
	cli := m.s.Client()
	for {
		before := append(clientv3.WithLastCreate(), clientv3.WithMaxCreateRev(m.rev-1))
		resp, err := cli.Get(ctx, m.pfx, before...)
		if err != nil {
			return err
		}
		if len(resp.Kvs) == 0 {
			break
		}
		if err := waitGone(ctx, cli, string(resp.Kvs[0].Key), resp.Kvs[0].CreateRevision); err != nil {
			return err
		}
	}
	resp, err := cli.Get(ctx, m.key, clientv3.WithCountOnly())
	if err != nil {
		return err
	}
	if resp.Count == 0 {
		return errKeyGone
	}
	return nil
}

// waitGone waits until key, as created at revision created, is deleted. Its watch starts at
// the next revision, which etcd serves at once; once the watch is in place, a read tells
// whether the key went before. A key of the same name created again since (the same session
// claiming the lock anew: it queues behind this claim) counts as gone.
func waitGone(ctx context.Context, cli *clientv3.Client, key string, created int64) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wch := cli.Watch(wctx, key, clientv3.WithCreatedNotify())
	if wr, ok := <-wch; !ok || wr.Err() != nil {
		return watchErr(ctx, wr)
	}
	resp, err := cli.Get(ctx, key)
	if err != nil {
		return err
	}
	if len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != created {
		return nil
	}
	for wr := range wch {
		if err := wr.Err(); err != nil {
			return err
		}
		for _, ev := range wr.Events {
			if ev.Type == mvccpb.DELETE {
				return nil
			}
		}
	}
	return watchErr(ctx, clientv3.WatchResponse{})
}

// watchErr is why a watch ended without the event: ctx, the response's error, or etcd.
func watchErr(ctx context.Context, wr clientv3.WatchResponse) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := wr.Err(); err != nil {
		return err
	}
	return errors.New("the watch ended")
}

// unlock removes the claim's key, if written: the lock goes to the next key.
func (m *mutex) unlock(ctx context.Context) error {
	if m.key == "" {
		return nil
	}
	if _, err := m.s.Client().Delete(ctx, m.key); err != nil {
		return err
	}
	m.key = ""
	return nil
}

package zklock

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// claimPrefix starts every claim's node name, before its random id and "-lock-"; ZooKeeper
// appends the sequence.
const claimPrefix = "_c_"

// errLocked is a try (no wait) that found the lock held by another claim.
var errLocked = errors.New("held by another claim")

// errNodeGone is a wait whose own node went meanwhile: its session expired.
var errNodeGone = errors.New("the claim's node is gone: its session expired")

// claim is one Obtain's node under the lock's parent: the recipe of ZooKeeper's lock.
type claim struct {
	c       *Client
	s       *session
	parent  string
	guid    string // the random id in the node's name
	node    string // the node's path once known
	id      int64  // the session the node was created in
	waited  bool   // granted after waiting for an earlier claim
	waiting bool   // the node is there and the claim waits its turn
	pending bool   // a create whose outcome is unknown: look the node up by guid
}

// create writes the claim's ephemeral sequential node, creating the lock's parent (a
// container) and the root if missing. A create whose answer is lost is looked up by the
// node's random id, as Curator's protected mode does.
func (cl *claim) create(ctx context.Context) error {
	cl.guid = rand.Text()
	prefix := cl.parent + "/" + claimPrefix + cl.guid + "-lock-"
	for try := 0; ; try++ {
		id, err := cl.s.await(ctx)
		if err != nil {
			return err
		}
		cl.id, cl.pending = id, true
		node, err := callCreate(ctx, cl, func() (string, error) {
			return cl.s.conn.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		})
		switch {
		case err == nil:
			cl.node, cl.pending = node, false
			return nil
		case errors.Is(err, zk.ErrNoNode) && try < 3:
			cl.pending = false
			if err := cl.ensureParent(ctx); err != nil {
				return err
			}
		case isConnErr(err) || errors.Is(err, zk.ErrSessionExpired):
			if node, ferr := cl.find(ctx); ferr != nil {
				return ferr
			} else if node != "" {
				cl.node, cl.pending = node, false
				return nil
			}
			cl.pending = false
		default:
			cl.pending = false
			return err
		}
	}
}

// callCreate is call for a create: if ctx ends before the answer, the node it may create is
// removed once the answer comes (see forget).
func callCreate(ctx context.Context, cl *claim, fn func() (string, error)) (string, error) {
	type result struct {
		node string
		err  error
	}
	ch := make(chan result, 1)
	go func() { n, err := fn(); ch <- result{n, err} }()
	select {
	case r := <-ch:
		return r.node, r.err
	case <-ctx.Done():
		late := &claim{c: cl.c, s: cl.s, parent: cl.parent, guid: cl.guid, id: cl.id, pending: true}
		cl.pending = false // the late claim owns the node now
		go func() {
			r := <-ch
			late.node, late.pending = r.node, r.err != nil && isConnErr(r.err)
			if r.err == nil || late.pending {
				late.forget()
			}
		}()
		return "", fmt.Errorf("no answer from zookeeper: %w", context.Cause(ctx))
	}
}

// ensureParent creates the root's nodes and the lock's parent, a container node.
func (cl *claim) ensureParent(ctx context.Context) error {
	parts := strings.Split(strings.TrimPrefix(cl.parent, "/"), "/")
	p := ""
	for i, part := range parts {
		p += "/" + part
		_, err := call(ctx, func() (string, error) {
			if i == len(parts)-1 {
				return cl.s.conn.CreateContainer(p, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll))
			}
			return cl.s.conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
		})
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("create %s: %w", p, err)
		}
	}
	return nil
}

// find looks the claim's node up by its random id; "" if it is not there.
func (cl *claim) find(ctx context.Context) (string, error) {
	if _, err := cl.s.await(ctx); err != nil {
		return "", err
	}
	children, err := call(ctx, func() ([]string, error) { ch, _, err := cl.s.conn.Children(cl.parent); return ch, err })
	if errors.Is(err, zk.ErrNoNode) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	for _, ch := range children {
		if strings.HasPrefix(ch, claimPrefix+cl.guid+"-") {
			return cl.parent + "/" + ch, nil
		}
	}
	return "", nil
}

// seq is a claim node's sequence, the ten digits ZooKeeper appends.
func seq(name string) string { return name[max(0, len(name)-10):] }

// wait waits until the claim's node is the first under the parent, watching only the node just
// before it. With try, a lock held by another claim is errLocked.
func (cl *claim) wait(ctx context.Context, try bool) error {
	own := path.Base(cl.node)
	for {
		children, err := call(ctx, func() ([]string, error) { ch, _, err := cl.s.conn.Children(cl.parent); return ch, err })
		if err != nil {
			return err
		}
		slices.SortFunc(children, func(a, b string) int { return strings.Compare(seq(a), seq(b)) })
		i := slices.Index(children, own)
		switch {
		case i < 0:
			return errNodeGone
		case i == 0:
			return nil
		case try:
			return errLocked
		}
		cl.waited, cl.waiting = true, true
		before := cl.parent + "/" + children[i-1]
		ch, err := call(ctx, func() (<-chan zk.Event, error) {
			ok, _, ch, err := cl.s.conn.ExistsW(before)
			if err == nil && !ok {
				return nil, nil // gone already
			}
			return ch, err
		})
		if err != nil {
			return err
		}
		if ch == nil {
			continue
		}
		select {
		case ev := <-ch:
			if ev.Err != nil {
				return ev.Err
			}
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// remove deletes the claim's node, if known, within ctx; a node already gone is no error.
func (cl *claim) remove(ctx context.Context) error {
	if cl.pending && cl.node == "" {
		node, err := cl.find(ctx)
		if err != nil {
			return err
		}
		cl.node, cl.pending = node, false
	}
	if cl.node == "" {
		return nil
	}
	_, err := call(ctx, func() (struct{}, error) { return struct{}{}, cl.s.conn.Delete(cl.node, -1) })
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	cl.node = ""
	return nil
}

// forgetSoon removes the node of a failed Obtain: at once if ZooKeeper confirms it within
// 250 ms, else in the background (see forget).
func (cl *claim) forgetSoon() {
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	err := cl.remove(ctx)
	cancel()
	if err != nil {
		go cl.forget()
	}
}

// forget removes the claim's node in the background, tried again after 50 ms doubling up to
// 1 s, until ZooKeeper confirms it, the node's session is gone (its nodes went with it), or
// the Client is closed. If the session lives on but the deletion keeps failing for
// forgetTimeout, the session is closed as a last resort, so that no one waits behind the node
// for ever; the locks held in it are lost then.
func (cl *claim) forget() {
	giveUp := time.Now().Add(forgetTimeout)
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		err := cl.remove(ctx)
		cancel()
		if err == nil || errors.Is(err, zk.ErrSessionExpired) {
			return
		}
		cl.s.mu.Lock()
		replaced := cl.s.id != 0 && cl.s.id != cl.id
		cl.s.mu.Unlock()
		if replaced { // a new session: the old one, and its nodes, expired
			return
		}
		if time.Now().After(giveUp) {
			cl.c.retire(cl.s)
			return
		}
		select {
		case <-time.After(backoff):
		case <-cl.c.done:
			return
		}
	}
}

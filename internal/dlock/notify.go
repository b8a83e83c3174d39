package dlock

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// lingerTime is how long a release channel stays subscribed after its last
// waiter left, so that a hot key is not subscribed and unsubscribed at every
// handoff. Idle channels are swept at this interval too.
const lingerTime = time.Second

// notifier multiplexes the release channels of all keys that goroutines of
// one Client wait for over one shared pub/sub connection per Redis node (one
// node, or each node of a Redlock Client). One goroutine per node, run, owns
// that node's connection: it sends every SUBSCRIBE and UNSUBSCRIBE (so they
// reach Redis in order) and delivers messages. Waiters never block on it: a
// missed or late notification only means waking by backoff instead.
type notifier struct {
	nodes []redis.UniversalClient
	all   uint64 // the bits of every node in subscription.sent

	mu      sync.Mutex
	subs    map[string]*subscription // by channel
	started bool
	closed  bool
	kicks   []chan struct{} // per node, cap 1: some subscriptions are not sent there yet
	cancel  context.CancelFunc
	done    sync.WaitGroup // the run goroutines
}

// subscription is one release channel with the waiters that use it.
type subscription struct {
	wake chan struct{} // cap 1: a release, or the subscription became active
	// fair holds the direct waiters (ObtainFair, RWMutex) of this process by token, each
	// woken when a release names it or names nobody, or when the subscription becomes
	// active; guarded by notifier.mu.
	fair map[string]chan struct{}
	refs int       // waiters using it; guarded by notifier.mu
	sent uint64    // bit i: SUBSCRIBE handed to node i's connection; guarded by notifier.mu
	idle time.Time // when refs last dropped to 0; guarded by notifier.mu
}

// wakeC returns the channel that signals a release; nil (never ready) for a
// nil subscription.
func (s *subscription) wakeC() <-chan struct{} {
	if s == nil {
		return nil
	}
	return s.wake
}

// drain discards a pending signal; nil-safe.
func (s *subscription) drain() {
	if s != nil {
		drainSignal(s.wake)
	}
}

// newNotifier returns a notifier over nodes, at most maxNodes of them.
func newNotifier(nodes ...redis.UniversalClient) *notifier {
	n := &notifier{nodes: nodes, all: 1<<len(nodes) - 1, subs: make(map[string]*subscription)}
	n.kicks = make([]chan struct{}, len(nodes))
	for i := range n.kicks {
		n.kicks[i] = make(chan struct{}, 1)
	}
	return n
}

// subscribe returns the subscription of channel, asking run to subscribe it
// if needed. It returns nil once the notifier is closed.
func (n *notifier) subscribe(channel string) *subscription {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	if !n.started {
		n.start()
	}
	s := n.subs[channel]
	if s == nil {
		s = &subscription{wake: make(chan struct{}, 1)}
		n.subs[channel] = s
	}
	s.refs++
	if s.sent != n.all {
		for i, kick := range n.kicks {
			if s.sent&(1<<i) == 0 {
				select {
				case kick <- struct{}{}:
				default:
				}
			}
		}
	}
	return s
}

// unsubscribe drops a waiter's use of s; run unsubscribes idle channels.
func (n *notifier) unsubscribe(s *subscription) {
	if s == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if s.refs--; s.refs == 0 {
		s.idle = time.Now()
	}
}

// joinFair registers the fair waiter token on s and returns the channel that signals its
// turn; leaveFair drops it. Both are nil-safe.
func (n *notifier) joinFair(s *subscription, token string) <-chan struct{} {
	if s == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if s.fair == nil {
		s.fair = make(map[string]chan struct{})
	}
	c := make(chan struct{}, 1)
	s.fair[token] = c
	return c
}

func (n *notifier) leaveFair(s *subscription, token string) {
	if s == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(s.fair, token)
}

// wake signals the waiters of channel in this process: the one of the local queue (see
// waitQueue), and every direct waiter (fair and read-write, see joinFair), or only the one
// whose token is named when token is not empty (a fair release names the head of the
// queue). A release by this Client calls it so that local waiters do not wait for the
// published message.
func (n *notifier) wake(channel, token string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.subs[channel]
	if s == nil {
		return
	}
	if token != "" {
		signal(s.fair[token]) // nil (no such waiter here): no-op
		return
	}
	signal(s.wake)
	for _, c := range s.fair {
		signal(c)
	}
}

// signal sends a wake-up on c unless one is pending already; a nil c is a no-op.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// start launches run for every node; n.mu must be held.
func (n *notifier) start() {
	ctx, cancel := context.WithCancel(context.Background())
	n.started, n.cancel = true, cancel
	n.done.Add(len(n.nodes))
	for i, rdb := range n.nodes {
		ps := rdb.Subscribe(ctx) // no channels: it connects on first use
		go n.run(ctx, i, ps)
	}
}

// close stops the runs and closes the pub/sub connections.
func (n *notifier) close() {
	n.mu.Lock()
	started := n.started && !n.closed
	n.closed = true
	n.mu.Unlock()
	if started {
		n.cancel()
		n.done.Wait()
	}
}

// run owns the pub/sub connection ps of node i.
func (n *notifier) run(ctx context.Context, i int, ps *redis.PubSub) {
	defer n.done.Done()
	msgs := ps.ChannelWithSubscriptions()
	sweep := time.NewTicker(lingerTime)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			_ = ps.Close()
			if msgs != nil {
				for range msgs { // let go-redis' reader goroutine finish
				}
			}
			return
		case m, ok := <-msgs:
			if !ok { // the Redis client was closed: waiters poll from now on
				msgs = nil
				continue
			}
			n.deliver(m)
		case <-n.kicks[i]:
			n.send(ctx, i, ps)
		case now := <-sweep.C:
			n.sweep(ctx, i, ps, now)
		}
	}
}

// deliver wakes the waiter of a released key. A confirmed subscription wakes
// it too: from then on no release can go unseen, so it tries once more. After
// a reconnect go-redis resubscribes, which so wakes every waiter.
func (n *notifier) deliver(m any) {
	switch m := m.(type) {
	case *redis.Message:
		token := m.Payload // a fair release names the waiter whose turn it is
		if token == "released" {
			token = ""
		}
		n.wake(m.Channel, token)
	case *redis.Subscription:
		if m.Kind == "subscribe" {
			n.wake(m.Channel, "")
		}
	}
}

// send subscribes the channels not sent to node i yet. On error go-redis
// keeps them and subscribes them again when it reconnects; the waiters poll
// meanwhile.
func (n *notifier) send(ctx context.Context, i int, ps *redis.PubSub) {
	var chans []string
	bit := uint64(1) << i
	n.mu.Lock()
	for ch, s := range n.subs {
		if s.sent&bit == 0 {
			s.sent |= bit
			chans = append(chans, ch)
		}
	}
	n.mu.Unlock()
	if len(chans) > 0 {
		_ = ps.Subscribe(ctx, chans...)
	}
}

// sweep unsubscribes from node i the channels idle for lingerTime, and
// forgets those that no node is subscribed to any more.
func (n *notifier) sweep(ctx context.Context, i int, ps *redis.PubSub, now time.Time) {
	var chans []string
	bit := uint64(1) << i
	n.mu.Lock()
	for ch, s := range n.subs {
		if s.refs == 0 && now.Sub(s.idle) >= lingerTime {
			if s.sent&bit != 0 {
				s.sent &^= bit
				chans = append(chans, ch)
			}
			if s.sent == 0 {
				delete(n.subs, ch)
			}
		}
	}
	n.mu.Unlock()
	if len(chans) > 0 {
		_ = ps.Unsubscribe(ctx, chans...)
	}
}

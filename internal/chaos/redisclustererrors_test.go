//go:build linux

package chaos_test

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestRedisErrorRepliesCluster is TestRedisErrorReplies on a Redis Cluster of two nodes of
// the test's own, which the API processes use with a cluster client: CLUSTERDOWN (the node
// owning the products' slots gives them up with CLUSTER DELSLOTS, and takes them back) and
// TRYAGAIN (the products' slots are being migrated to the other node with only some of each
// script's keys still on the source; lifted by completing the migration, as a reshard does).
func TestRedisErrorRepliesCluster(t *testing.T) {
	faultTest(t)
	nodes := servers.StartRedisCluster(t, 2)
	b := onRedis(t, strings.Join(servers.Addrs(nodes), ","))
	apis := b.startAPIs(t, 2, nil)
	e := newReplyEnv(t, apis, b.dsn)
	c := &clusterSlots{nodes: nodes}
	for _, s := range e.sales {
		c.add(t, s, b.keys())
	}
	for _, f := range []replyFault{c.downFault(), c.migratingFault()} {
		e.run(t, f)
	}
	e.finish(t)
}

// clusterSlots are the slots of the products on sale, on a cluster whose nodes share the
// slots as StartRedisCluster does: in equal ranges, in order.
type clusterSlots struct {
	nodes    []*servers.Redis
	products []productSlot
}

// productSlot is the slot of a product's keys and the two keys its script touches; moved is
// the one a migration moves first, if any.
type productSlot struct {
	slot   int64
	keys   []string
	moved  string
	src    *servers.Redis // the slot's owner before the migration
	dst    *servers.Redis // the other node
	client *redis.Client  // a plain client of src
}

func (c *clusterSlots) add(t *testing.T, s *sale, k inventory.Keys) {
	t.Helper()
	// The lock and its fence (dlock's suffix): the lock is absent between holders.
	p := productSlot{keys: []string{k.Lock(s.id), dlock.FenceKey(k.Lock(s.id))}}
	if s.strategy == "redis" {
		p.keys = []string{k.GateStock(s.id), k.GateBuyers(s.id)}
		p.moved = p.keys[1] // both exist: the migration moves the buyers first
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	slot, err := c.nodes[0].Client().ClusterKeySlot(ctx, p.keys[0]).Result()
	if err != nil {
		t.Fatal(err)
	}
	i := int(slot) * len(c.nodes) / 16384
	p.slot, p.src, p.dst = slot, c.nodes[i], c.nodes[(i+1)%len(c.nodes)]
	p.client = p.src.Client()
	c.products = append(c.products, p)
}

// probe runs a read-only script on each product's keys on its slot's (former) owner, and
// returns the last error if every one failed with class, else the first other outcome.
func (c *clusterSlots) probe(class string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		var last error
		for _, p := range c.products {
			last = p.client.Eval(ctx, "return redis.call('EXISTS', KEYS[1], KEYS[2])", p.keys).Err()
			if last == nil || !strings.HasPrefix(last.Error(), class+" ") {
				return last
			}
		}
		return last
	}
}

// served reports whether every product's keys are served by its slot's (former) owner.
func (c *clusterSlots) served() bool {
	for _, p := range c.products {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := p.client.Eval(ctx, "return redis.call('EXISTS', KEYS[1], KEYS[2])", p.keys).Err()
		cancel()
		if err != nil {
			return false
		}
	}
	return true
}

// downFault: the owner of each product's slot gives it up (CLUSTER DELSLOTS): it answers
// CLUSTERDOWN for its keys, the other node still redirects them to it. ADDSLOTS lifts it.
func (c *clusterSlots) downFault() replyFault {
	slots := func(t *testing.T, sub string) {
		for _, p := range c.products {
			p.src.Do(t, 0, "CLUSTER", sub, p.slot)
		}
	}
	return replyFault{
		class: "CLUSTERDOWN", how: "CLUSTER DELSLOTS of the products' slots on their owner",
		probe: c.probe("CLUSTERDOWN"),
		start: func(t *testing.T) (<-chan struct{}, func() error) { slots(t, "DELSLOTS"); return nil, nil },
		lift: func(t *testing.T) {
			slots(t, "ADDSLOTS")
			testenv.Eventually(t, 20*time.Second, "the products' slots served again", c.served)
		},
	}
}

// migratingFault: each product's slot is set MIGRATING on its owner and IMPORTING on the
// other node, and the redis product's buyers are moved: a script whose keys are partly on
// the source gets TRYAGAIN. The lift completes the migration: the keys left are moved and
// both nodes assign the slot to the target.
func (c *clusterSlots) migratingFault() replyFault {
	return replyFault{
		class: "TRYAGAIN", how: "CLUSTER SETSLOT MIGRATING/IMPORTING, part of the keys moved",
		probe: c.probe("TRYAGAIN"),
		start: func(t *testing.T) (<-chan struct{}, func() error) {
			for _, p := range c.products {
				p.dst.Do(t, 0, "CLUSTER", "SETSLOT", p.slot, "IMPORTING", nodeID(t, p.src))
				p.src.Do(t, 0, "CLUSTER", "SETSLOT", p.slot, "MIGRATING", nodeID(t, p.dst))
				if p.moved != "" {
					migrate(t, p, p.moved)
				}
			}
			return nil, nil
		},
		lift: func(t *testing.T) {
			for _, p := range c.products {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				for range 100 { // a few keys per product: bounded all the same
					keys, err := p.client.ClusterGetKeysInSlot(ctx, int(p.slot), 100).Result()
					if err != nil {
						t.Fatal(err)
					}
					if len(keys) == 0 {
						break
					}
					migrate(t, p, keys...)
				}
				cancel()
				// The target's config epoch first becomes the cluster's newest, so that its claim
				// wins over any older gossip of the source: without it, a loaded run once left
				// the two nodes each redirecting the slot to the other.
				p.dst.Do(t, 0, "CLUSTER", "BUMPEPOCH")
				p.dst.Do(t, 0, "CLUSTER", "SETSLOT", p.slot, "NODE", nodeID(t, p.dst))
				p.src.Do(t, 0, "CLUSTER", "SETSLOT", p.slot, "NODE", nodeID(t, p.dst))
			}
			testenv.Eventually(t, 20*time.Second, "both nodes agree that the target owns the products' slots", c.migrated)
		},
	}
}

// migrated reports whether every node maps each product's slot to its target.
func (c *clusterSlots) migrated() bool {
	for _, node := range c.nodes {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		shards, err := node.Client().ClusterShards(ctx).Result()
		cancel()
		if err != nil {
			return false
		}
		for _, p := range c.products {
			if owner(shards, p.slot) != p.dst.Addr {
				return false
			}
		}
	}
	return true
}

// owner is the address (ip:port) of the master that serves slot in shards, or "".
func owner(shards []redis.ClusterShard, slot int64) string {
	for _, sh := range shards {
		if !slices.ContainsFunc(sh.Slots, func(r redis.SlotRange) bool { return r.Start <= slot && slot <= r.End }) {
			continue
		}
		for _, n := range sh.Nodes {
			if n.Role == "master" {
				return net.JoinHostPort(n.IP, strconv.FormatInt(n.Port, 10))
			}
		}
	}
	return ""
}

// migrate moves keys of p's slot from its source to its target node.
func migrate(t *testing.T, p productSlot, keys ...string) {
	t.Helper()
	host, port, _ := net.SplitHostPort(p.dst.Addr)
	args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
	for _, k := range keys {
		args = append(args, k)
	}
	p.src.Do(t, 0, args...)
}

// nodeID is node's cluster node ID (CLUSTER MYID).
func nodeID(t *testing.T, node *servers.Redis) string {
	t.Helper()
	id, err := node.Client().ClusterMyID(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

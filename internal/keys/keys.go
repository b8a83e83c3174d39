// Package keys is the layout of seckill's Redis keys: the name of every key of a product
// under one namespace prefix. The service (internal/inventory) writes them; the tools that
// read Redis directly to audit a sale (internal/audit) find them here, without linking the
// service.
package keys

import "strconv"

// Keys names the Redis keys of products under one namespace prefix. Every key of one product
// carries the hash tag {p:ID}, so a Lua script may touch several of them on a Redis Cluster.
type Keys struct {
	Prefix string // e.g. "seckill"; REDIS_KEY_PREFIX in cmd/api
}

func (k Keys) product(id int64, what string) string {
	return k.Prefix + ":{p:" + strconv.FormatInt(id, 10) + "}:" + what
}

// Lock is the dlock key that serialises purchases of a product.
func (k Keys) Lock(id int64) string { return k.product(id, "lock") }

// GateStock is the Redis gate's count of units left (redis strategy).
func (k Keys) GateStock(id int64) string { return k.product(id, "stock") }

// GateBuyers is the Redis gate's set of admitted user ids (redis strategy).
func (k Keys) GateBuyers(id int64) string { return k.product(id, "buyers") }

// GatePending is the Redis gate's hash of admissions not yet confirmed by PostgreSQL: user
// id -> "<attempt token>|<deadline in ms of Redis time>" (redis strategy).
func (k Keys) GatePending(id int64) string { return k.product(id, "pending") }

// GateSeed is the set one seeding of the gate (named by token) fills chunk by chunk before it
// becomes GateBuyers in one step.
func (k Keys) GateSeed(id int64, token string) string { return k.product(id, "seed:"+token) }

// GateLate is the set of buyers whose orders PostgreSQL confirmed while the gate did not exist
// (Redis lost its data, and a seeding may be reading PostgreSQL): the seeding's publish adds
// the ones its snapshot missed (internal/inventory/lua/confirm.lua and publish.lua).
func (k Keys) GateLate(id int64) string { return k.product(id, "late") }

// GateReturned is the set of the ids of the product's orders whose units went back to the gate
// (an expired or cancelled reservation, redis and queue strategies): what makes a return to
// the gate happen once per order, however often it is driven (inventory.Gate.Return).
func (k Keys) GateReturned(id int64) string { return k.product(id, "returned") }

// GateStamp is the gate's stamp: '<data set>|<ms>', the Redis data set in which the gate last
// agreed with PostgreSQL, and PostgreSQL's time of the read it agreed with (internal/inventory/lua/stamp.lua).
func (k Keys) GateStamp(id int64) string { return k.product(id, "stamp") }

// GateRepairLock is the lock that lets one process at a time seed a product's gate, reconcile
// its expired admissions, verify it, or give it back the units of ended reservations.
func (k Keys) GateRepairLock(id int64) string { return k.product(id, "gatelock") }

// QueueStream is the queue strategy's stream of admitted purchases not yet written to
// PostgreSQL (entries: user).
func (k Keys) QueueStream(id int64) string { return k.product(id, "queue") }

// QueueDead is the queue strategy's dead-letter stream: purchases that could not be written
// (entries: user, entry, reason).
func (k Keys) QueueDead(id int64) string { return k.product(id, "dead") }

// QueueActive is the registry of live queue products: a sorted set of the ids of the queue
// products whose streams may hold purchases, each scored with the time of its last mark (see
// Queue.Backlogged). It is one key, in no product's hash slot: scripts never touch it with a
// product's keys.
func (k Keys) QueueActive() string { return k.Prefix + ":queue:active" }

// QueueChannel is the pub/sub channel on which written queue purchases are announced to the
// buyers waiting for them in every process.
func (k Keys) QueueChannel() string { return k.Prefix + ":queue:written" }

// SoldOut is a product's sold-out mark: 'm:<ident>:<token>' (inventory.SoldOut), or the tentative
// 't:<token>' of a Mark still asking PostgreSQL.
func (k Keys) SoldOut(id int64) string { return k.product(id, "soldout") }

// SoldOutHold is the key that, while it exists, keeps new sold-out marks off the product: set
// by a lift for the time the lifter has to put its unit back (inventory.SoldOutOptions.Hold). Its value
// names it.
func (k Keys) SoldOutHold(id int64) string { return k.product(id, "soldout:hold") }

// SoldOutIdent is the ident of the Redis data set the product was last marked under.
func (k Keys) SoldOutIdent(id int64) string { return k.product(id, "soldout:ident") }

// SoldOutChannel is the pub/sub channel on which sold-out product ids are announced.
func (k Keys) SoldOutChannel() string { return k.Prefix + ":soldout" }

// SoldOutLiftChannel is the pub/sub channel on which the ids of products whose sold-out mark
// was lifted are announced.
func (k Keys) SoldOutLiftChannel() string { return k.Prefix + ":soldout:lift" }

// CreatedChannel is the pub/sub channel on which the ids of new products are announced.
func (k Keys) CreatedChannel() string { return k.Prefix + ":created" }

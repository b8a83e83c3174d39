// Package keys is the layout of seckill's Redis keys: the name of every key of a product
// under one namespace prefix. The service (internal/inventory) writes them; the tools that
// read Redis directly to audit a sale (internal/audit) find them here, without linking the
// service.
package keys

import "strconv"

// Keys names the Redis keys of products under Prefix; a product's keys share the hash tag {p:ID}.
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

// GatePending is the gate's unconfirmed admissions: user -> "<token>|<deadline ms>".
func (k Keys) GatePending(id int64) string { return k.product(id, "pending") }

// GateSeed is the set a seeding fills before it becomes GateBuyers.
func (k Keys) GateSeed(id int64, token string) string { return k.product(id, "seed:"+token) }

// GateLate is the set of buyers confirmed while the gate was missing; Publish adds them.
func (k Keys) GateLate(id int64) string { return k.product(id, "late") }

// GateReturned is the set of order ids whose units went back to the gate.
func (k Keys) GateReturned(id int64) string { return k.product(id, "returned") }

// GateRestocked is the set of restock keys whose units the gate's stock counts.
func (k Keys) GateRestocked(id int64) string { return k.product(id, "restocked") }

// GateStamp is the gate's stamp: '<data set>|<PostgreSQL ms>'.
func (k Keys) GateStamp(id int64) string { return k.product(id, "stamp") }

// GateRepairLock is the lock of the gate's seeding, reconciling, verifying and returns.
func (k Keys) GateRepairLock(id int64) string { return k.product(id, "gatelock") }

// QueueStream is the stream of queued purchases (entries: user).
func (k Keys) QueueStream(id int64) string { return k.product(id, "queue") }

// QueueDead is the dead-letter stream (entries: user, entry, reason).
func (k Keys) QueueDead(id int64) string { return k.product(id, "dead") }

// QueueActive is the sorted set of live queue products, scored by last mark; in no product's slot.
func (k Keys) QueueActive() string { return k.Prefix + ":queue:active" }

// QueueChannel is the pub/sub channel announcing written queue purchases.
func (k Keys) QueueChannel() string { return k.Prefix + ":queue:written" }

// Line is a product's pre-queue: a sorted set of user ids, scored by drawn place (below 1)
// or by arrival after the start (Redis's clock, ms); see internal/inventory/line.go.
func (k Keys) Line(id int64) string { return k.product(id, "line") }

// SoldOut is the sold-out mark: 'm:<ident>:<token>', or 't:<token>' while tentative.
func (k Keys) SoldOut(id int64) string { return k.product(id, "soldout") }

// SoldOutHold names the key that, while it exists, keeps new sold-out marks off the product.
func (k Keys) SoldOutHold(id int64) string { return k.product(id, "soldout:hold") }

// SoldOutIdent is the ident of the Redis data set the product was last marked under.
func (k Keys) SoldOutIdent(id int64) string { return k.product(id, "soldout:ident") }

// SoldOutChannel is the pub/sub channel announcing sold-out products.
func (k Keys) SoldOutChannel() string { return k.Prefix + ":soldout" }

// SoldOutLiftChannel is the pub/sub channel announcing lifted sold-out marks.
func (k Keys) SoldOutLiftChannel() string { return k.Prefix + ":soldout:lift" }

// CreatedChannel is the pub/sub channel announcing new products.
func (k Keys) CreatedChannel() string { return k.Prefix + ":created" }

// ControlsChannel is the pub/sub channel announcing products whose controls changed (paused,
// resumed, ended, restocked).
func (k Keys) ControlsChannel() string { return k.Prefix + ":controls" }

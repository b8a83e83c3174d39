package app

import (
	"log/slog"

	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// Plugins are what a build adds to the service from outside (Config.Plug): the lab build's
// teaching strategies, think_ms pause and lock history (internal/labapi). The zero value adds
// nothing: the production service.
type Plugins struct {
	// Strategies are purchase paths beyond the production ones, by name.
	Strategies map[inventory.Strategy]Plugged
	// Think takes products' think_ms pause (order.Deps.Think); nil: think_ms is refused.
	Think order.Thinker
	// Locks, if set, decorates the product locks (a lock history's recorder).
	Locks func(order.Locker) order.Locker
	// Close, if set, is called by App.Close.
	Close func() error
}

// Plugged is one strategy plugged in: its purchase path, and the check of its products'
// lock and lease (inventory.Store.Plug; nil: they must be empty).
type Plugged struct {
	Strategy order.Strategy
	Check    func(inventory.NewProduct) error
}

// Parts are the App's parts that a Config.Plug builds on.
type Parts struct {
	Redis     redis.UniversalClient
	Etcd      *clientv3.Client // nil: the process has no etcd
	DB        *gorm.DB         // the service's PostgreSQL pool
	ZooKeeper []string         // ZooKeeper's members (host:port); none: the process has no ZooKeeper
	Keys      inventory.Keys
	Logger    *slog.Logger
}

// plug applies p to the product store and returns the service's dependencies it adds.
func (p Plugins) plug(products *inventory.Store, d *order.Deps) {
	for name, s := range p.Strategies {
		products.Plug(name, s.Check)
		if d.Strategies == nil {
			d.Strategies = map[inventory.Strategy]order.Strategy{}
		}
		d.Strategies[name] = s.Strategy
	}
	if p.Think != nil {
		products.AllowThink()
		d.Think = p.Think
	}
	if p.Locks != nil {
		d.ProductLocks = p.Locks(d.ProductLocks)
	}
}

package inventory

import (
	"context"
	"log/slog"

	"github.com/redis/go-redis/v9"
)

// Creations tells every API process's Store of a product created, through Redis, best effort
// (see NotFoundTTL). It is safe for concurrent use.
type Creations struct {
	rdb   redis.UniversalClient
	keys  Keys
	store *Store
	log   *slog.Logger
}

// NewCreations returns the Creations of store, sharing them through rdb under keys, and makes
// store announce each product it creates. Call it before store is used.
func NewCreations(rdb redis.UniversalClient, keys Keys, store *Store, log *slog.Logger) *Creations {
	c := &Creations{rdb: rdb, keys: keys, store: store, log: log}
	store.announce = c.announce
	return c
}

// announce tells every process that product id exists now.
func (c *Creations) announce(ctx context.Context, id int64) {
	if err := announce(ctx, c.rdb, c.keys.CreatedChannel(), id); err != nil {
		c.log.WarnContext(ctx, "announcing a new product failed; processes that looked its id up find it within NotFoundTTL",
			"product_id", id, "err", err)
	}
}

// Listen makes the Store forget each id another process announces until ctx ends. Run it in a
// goroutine.
func (c *Creations) Listen(ctx context.Context) {
	listenIDs(ctx, c.rdb, c.keys.CreatedChannel(), c.store.notFound.created)
}

package inventory

import (
	"context"
	"log/slog"

	"github.com/redis/go-redis/v9"
)

// Creations tells every process's Store of new products, best effort. Safe for concurrent use.
type Creations struct {
	rdb   redis.UniversalClient
	keys  Keys
	store *Store
	log   *slog.Logger
}

// NewCreations makes store announce its creations through rdb. Call it before store is used.
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

// Listen makes the Store forget each announced id until ctx ends.
func (c *Creations) Listen(ctx context.Context) {
	listenIDs(ctx, c.rdb, c.keys.CreatedChannel(), c.store.notFound.created)
}

package inventory

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
)

// TestCreationAnnounced: a Store that remembered an id as not found, for an hour here, finds
// the product another process creates under that id as soon as the creation's announcement
// arrives; a Store that does not listen (the control) still answers not found, so only the
// announcement can have told the first.
func TestCreationAnnounced(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	rdb, prefix := testenv.Redis(t)
	keys := Keys{Prefix: prefix}
	log := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	creator, listener, deaf := NewStore(gdb), NewStore(gdb), NewStore(gdb)
	NewCreations(rdb, keys, creator, log)
	go NewCreations(rdb, keys, listener, log).Listen(ctx)
	testenv.Eventually(t, 5*time.Second, "the listener subscribed", func() bool {
		n, err := rdb.PubSubNumSub(ctx, keys.CreatedChannel()).Result()
		return err == nil && n[keys.CreatedChannel()] == 1
	})
	var next int64
	if err := gdb.Raw(`SELECT last_value + CASE WHEN is_called THEN 1 ELSE 0 END FROM products_id_seq`).Scan(&next).Error; err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Store{listener, deaf} {
		s.notFound.ttl = time.Hour
		if _, err := s.Meta(ctx, next); !errors.Is(err, ErrNotFound) {
			t.Fatalf("lookup of the next id = %v, want ErrNotFound", err)
		}
	}
	p, err := creator.Create(ctx, NewProduct{Name: "new", Stock: 1})
	if err != nil || p.ID != next {
		t.Fatalf("create = %+v, %v; want id %d", p, err, next)
	}
	testenv.Eventually(t, 5*time.Second, "the listener to find the new product", func() bool {
		_, err := listener.Meta(ctx, next)
		return err == nil
	})
	if _, err := deaf.Meta(ctx, next); !errors.Is(err, ErrNotFound) {
		t.Errorf("control: a Store that did not hear of the creation = %v, want ErrNotFound (remembered)", err)
	}
}

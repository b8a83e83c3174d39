package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/health"
	"github.com/seckill/seckill/internal/inventory"
)

// postgresClock reads PostgreSQL's clock: clock_timestamp(), the time of the statement itself.
func postgresClock(db *gorm.DB) func(ctx context.Context) (time.Time, error) {
	return func(ctx context.Context) (time.Time, error) {
		var at time.Time
		if err := db.WithContext(ctx).Raw(`SELECT clock_timestamp()`).Row().Scan(&at); err != nil {
			return time.Time{}, fmt.Errorf("read PostgreSQL's clock: %w", err)
		}
		return at, nil
	}
}

// watchSkew exports how far PostgreSQL's clock is from this process's, which decides sale
// windows (docs/api.md#the-sale-window), until ctx ends.
func watchSkew(ctx context.Context, db *gorm.DB, observe func(time.Duration), log *slog.Logger) {
	health.WatchSkew(ctx, postgresClock(db), observe, log)
}

// exempt reports the products the rate limiter lets through unchecked: sold out, outside
// their sale window, or paused, each answered without a round trip.
func exempt(soldOut *inventory.SoldOut, products *inventory.Store) func(id int64) bool {
	return func(id int64) bool {
		return soldOut.Is(id) || products.OffSale(id, time.Now()) || products.PausedNow(id)
	}
}

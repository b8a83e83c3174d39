package api

import "time"

// Line is a product's pre-queue (docs/api.md#the-line-before-the-start): places drawn at
// random at the start and called Rate a second, each call valid WindowMS.
type Line struct {
	// Rate is the places called a second, 1 to 1,000,000; 0 at creation: the strategy's default.
	Rate int `json:"rate"`
	// WindowMS is how long a called place may buy, 1,000 to 3,600,000; 0 at creation: 30,000.
	WindowMS int `json:"window_ms"`
}

// The states of a LinePlace.
const (
	PlaceNotInLine = "not_in_line"
	PlaceWaiting   = "waiting"
	PlaceCalled    = "called"
	PlaceExpired   = "expired"
)

// LinePlace is a buyer's place in a product's line: the body of POST (202) and GET (200)
// /api/v1/products/{id}/line[/{user_id}].
type LinePlace struct {
	ProductID int64 `json:"product_id"`
	UserID    int64 `json:"user_id"`
	// State is one of the Place constants.
	State string `json:"state"`
	// Drawn is false before the start: the places are drawn at starts_at, so there is no
	// position yet.
	Drawn bool `json:"drawn"`
	// Position is the place's 1-based rank, once drawn.
	Position int64 `json:"position,omitempty"`
	// Ahead is how many places before this one are not called yet (waiting only).
	Ahead int64 `json:"ahead,omitempty"`
	// WaitMS estimates how long until the place is called: until the start before the draw.
	WaitMS int64 `json:"wait_ms"`
	// CalledAt is when the place is (estimate) or was called; CalledUntil when its call ends.
	CalledAt    *time.Time `json:"called_at,omitempty"`
	CalledUntil *time.Time `json:"called_until,omitempty"`
	StartsAt    time.Time  `json:"starts_at"`
}

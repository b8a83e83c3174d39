package api

import "time"

// NewProduct is the body of POST /api/v1/products (admin).
type NewProduct struct {
	// Name is 1 to 200 characters of valid UTF-8, without NUL.
	Name string `json:"name"`
	// Stock is required, 0 to 100,000,000: write new(10).
	Stock *int `json:"stock"`
	// Strategy is dlock (empty), pessimistic, optimistic, redis, queue, or in the lab build naive, lab.
	Strategy string `json:"strategy"`
	// ThinkMS (0 to 10,000; lab build only) pauses between reading and writing the stock.
	ThinkMS int `json:"think_ms"`
	// Lock is the lab lock of a strategy lab product, required there (docs/lab.md).
	Lock string `json:"lock,omitempty"`
	// LeaseMS is the lab lock's lease: 0 (LOCK_TTL) or 10 to 60,000.
	LeaseMS int `json:"lease_ms,omitempty"`
	// Fair (dlock only, not Redlock) serves buyers in arrival order.
	Fair bool `json:"fair,omitempty"`
	// PayWithinMS (0 to 86,400,000) is the payment window; 0 means every order is paid at once.
	PayWithinMS int `json:"pay_within_ms,omitempty"`
	// StartsAt and EndsAt (RFC 3339, optional) bound the sale window; EndsAt after StartsAt.
	StartsAt *time.Time `json:"starts_at,omitempty"`
	EndsAt   *time.Time `json:"ends_at,omitempty"`
	// Line (optional, needs StartsAt) gives buyers who come before the start a drawn place.
	Line *Line `json:"line,omitempty"`
}

// Product is the body of a product's creation and of its GET.
type Product struct {
	ID           int64      `json:"id"`
	Name         string     `json:"name"`
	Stock        int        `json:"stock"`
	InitialStock int        `json:"initial_stock"`
	Strategy     string     `json:"strategy"`
	ThinkMS      int        `json:"think_ms"`
	Lock         string     `json:"lock,omitempty"`          // lab products only
	LeaseMS      int        `json:"lease_ms,omitempty"`      // lab products with a lease of their own only
	Fair         bool       `json:"fair,omitempty"`          // fair dlock products only
	PayWithinMS  int        `json:"pay_within_ms,omitempty"` // products with a payment window only
	StartsAt     *time.Time `json:"starts_at,omitempty"`     // products with a sale start only
	EndsAt       *time.Time `json:"ends_at,omitempty"`       // products with a sale end only
	PausedAt     *time.Time `json:"paused_at,omitempty"`     // paused products only
	Line         *Line      `json:"line,omitempty"`          // products with a line only
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
	Sold         int        `json:"sold"` // initial_stock - stock
}

// Purchase is the body of POST /api/v1/products/{id}/purchase.
type Purchase struct {
	// UserID is the buyer, above 0; with a buyer token, 0 or the token's user.
	UserID int64 `json:"user_id"`
}

// BundlePurchase is the body of POST /api/v1/bundles/purchase: 1 to 10 dlock products.
type BundlePurchase struct {
	UserID     int64   `json:"user_id"`
	ProductIDs []int64 `json:"product_ids"`
}

// Bundle is a bundle purchase's 201 body, orders in ProductIDs' order.
type Bundle struct {
	Orders []Order `json:"orders"`
}

// Order is a committed purchase, as purchases and the order routes answer it.
type Order struct {
	ID        int64     `json:"order_id"`
	ProductID int64     `json:"product_id"`
	UserID    int64     `json:"user_id"`
	CreatedAt time.Time `json:"created_at"`
	// Status is one of the Status constants.
	Status string     `json:"status"`
	PayBy  *time.Time `json:"pay_by,omitempty"`  // reservations only: pay before it
	PaidAt *time.Time `json:"paid_at,omitempty"` // reservations paid only
	// EndedAt is when a reservation expired or was cancelled.
	EndedAt *time.Time `json:"ended_at,omitempty"`
}

// Order statuses; pending and paid are live, one per user and product.
const (
	StatusPaid      = "paid"
	StatusPending   = "pending"
	StatusExpired   = "expired"
	StatusCancelled = "cancelled"
)

// Audit is the body of GET /api/v1/products/{id}/audit (admin).
type Audit struct {
	ProductID      int64 `json:"product_id"`
	InitialStock   int   `json:"initial_stock"`
	Stock          int   `json:"stock"`
	Orders         int   `json:"orders"`          // live orders: pending or paid
	Pending        int   `json:"pending"`         // of which pending: reservations not paid yet
	Ended          int   `json:"ended"`           // expired or cancelled reservations, whose units went back
	Sold           int   `json:"sold"`            // initial_stock - stock
	Oversold       int   `json:"oversold"`        // orders beyond initial_stock
	DuplicateUsers int   `json:"duplicate_users"` // users with more than one live order
	Restocked      int   `json:"restocked"`       // units restocks added (initial_stock counts them)
	// Consistent: orders == sold, stock >= 0, no oversale or duplicate user, Redis agrees.
	Consistent bool `json:"consistent"`
	// Redis is the gate's side, for the redis strategy only.
	Redis *GateAudit `json:"redis,omitempty"`
	// Queue is the Redis side of a queue-strategy product only.
	Queue *QueueAudit `json:"queue,omitempty"`
}

// QueueAudit is the Redis side of a queue-strategy product, compared with PostgreSQL.
type QueueAudit struct {
	Seeded bool  `json:"seeded"` // Redis holds the product's stock and buyers
	Stock  int64 `json:"stock"`  // stock left in Redis
	Buyers int64 `json:"buyers"` // users admitted: queued or written
	Queued int64 `json:"queued"` // purchases in the stream, not written yet
	Dead   int64 `json:"dead"`   // purchases in the dead-letter stream
	// Agrees: Redis matches PostgreSQL, queued purchases counted, and nothing is dead-lettered.
	Agrees bool `json:"agrees"`
}

// Accepted is the 202 body of a queued purchase; poll Order's lookup.
type Accepted struct {
	Status    string `json:"status"` // "accepted"
	ProductID int64  `json:"product_id"`
	UserID    int64  `json:"user_id"`
	Order     string `json:"order"` // the order lookup's path, as in Location
}

// GateAudit is the Redis gate of a redis-strategy product, compared with PostgreSQL.
type GateAudit struct {
	Seeded  bool  `json:"seeded"`  // the gate holds the product's stock and buyers
	Stock   int64 `json:"stock"`   // stock left in the gate
	Buyers  int64 `json:"buyers"`  // users the gate admitted
	Pending int64 `json:"pending"` // admissions PostgreSQL has not confirmed yet
	// Agrees: the gate's stock and buyers equal PostgreSQL's (or no buyer came yet).
	Agrees bool `json:"agrees"`
}

// The states in Health and Readiness.
const (
	StateOK          = "ok"
	StateUnavailable = "unavailable"
)

// Health is the body of 200 to GET /healthz: the process is alive and serving.
type Health struct {
	Status string `json:"status"` // StateOK
}

// Readiness is the body of GET /readyz: 200 when serving, 503 while draining.
type Readiness struct {
	// Checks holds each state by name ("serving" and the backends): StateOK or StateUnavailable.
	Checks map[string]string `json:"checks"`
	Status string            `json:"status"` // StateOK or StateUnavailable
}

// NewRestock is the body of POST /api/v1/products/{id}/restock (admin).
type NewRestock struct {
	// Units (1 to 100,000,000, initial_stock staying at most that) are added to the stock.
	Units int `json:"units"`
	// Key (1 to 128 characters) makes the restock happen once: the same key again answers the
	// first restock; with other units, 409 idempotency_conflict. The Idempotency-Key header may
	// carry it instead (both: the same).
	Key string `json:"key,omitempty"`
}

// Restock is the answer to a restock: the restock the key committed first.
type Restock struct {
	ProductID int64     `json:"product_id"`
	Key       string    `json:"key"`
	Units     int       `json:"units"`
	CreatedAt time.Time `json:"created_at"`
}

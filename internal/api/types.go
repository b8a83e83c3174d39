package api

import "time"

// NewProduct is the body of POST /api/v1/products (admin): a product to create.
type NewProduct struct {
	// Name is 1 to 200 characters of valid UTF-8, without NUL.
	Name string `json:"name"`
	// Stock is required, 0 to 100,000,000; a pointer because 0 is a stock and missing is an
	// error: write new(10).
	Stock *int `json:"stock"`
	// Strategy is one of dlock (the default, when empty), pessimistic, optimistic, redis,
	// queue, or, in the lab build of the API only, naive and lab (the oversell lab, docs/lab.md).
	Strategy string `json:"strategy"`
	// ThinkMS (0 to 10,000) pauses each purchase between reading and writing the stock; above
	// 0, the lab build of the API only.
	ThinkMS int `json:"think_ms"`
	// Lock is the lab lock that alone guards a lab product (required with strategy lab,
	// refused otherwise): none, mutex, setnx, setnx-expire, del, lease, watchdog, fence,
	// dlock, redsync, redislock, etcd, postgres-nofence, postgres, zookeeper-nofence or
	// zookeeper.
	Lock string `json:"lock,omitempty"`
	// LeaseMS is the lab lock's lease (strategy lab only): 0, the API's LOCK_TTL, or 10 to
	// 60,000.
	LeaseMS int `json:"lease_ms,omitempty"`
	// Fair (strategy dlock only) serves buyers in the order they asked, across API
	// processes: a fair lock (docs/dlock.md). Not with Redlock.
	Fair bool `json:"fair,omitempty"`
	// PayWithinMS (0 to 86,400,000) is the payment window of the product's reservations: its
	// orders are pending until paid and expire, their units going back on sale, this long after
	// they were made. 0 (the default): every order is final (paid). Not for the naive and lab
	// strategies.
	PayWithinMS int `json:"pay_within_ms,omitempty"`
}

// Product is a product as the API shows it: the body of 201 to POST /api/v1/products and of
// 200 to GET /api/v1/products/{id}.
type Product struct {
	ID           int64     `json:"id"`
	Name         string    `json:"name"`
	Stock        int       `json:"stock"`
	InitialStock int       `json:"initial_stock"`
	Strategy     string    `json:"strategy"`
	ThinkMS      int       `json:"think_ms"`
	Lock         string    `json:"lock,omitempty"`          // lab products only
	LeaseMS      int       `json:"lease_ms,omitempty"`      // lab products with a lease of their own only
	Fair         bool      `json:"fair,omitempty"`          // fair dlock products only
	PayWithinMS  int       `json:"pay_within_ms,omitempty"` // products with a payment window only
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
	Sold         int       `json:"sold"` // initial_stock - stock
}

// Purchase is the body of POST /api/v1/products/{id}/purchase.
type Purchase struct {
	// UserID is the buyer, a positive 64-bit integer; missing reads as 0, which is refused.
	// With buyer identity on (docs/api.md#buyer-identity) the buyer is the bearer token's
	// user: UserID may be 0, and is refused (CodeUserMismatch) if it is another user.
	UserID int64 `json:"user_id"`
}

// BundlePurchase is the body of POST /api/v1/bundles/purchase: one unit of each product to
// the user, all or nothing. ProductIDs are 1 to 10 distinct dlock products, not fair.
// UserID is as in Purchase.
type BundlePurchase struct {
	UserID     int64   `json:"user_id"`
	ProductIDs []int64 `json:"product_ids"`
}

// Bundle is the body of 201 to a bundle purchase: the orders, in the order of ProductIDs.
type Bundle struct {
	Orders []Order `json:"orders"`
}

// Order is a committed purchase: the body of 201 to a purchase, and of 200 to the order
// lookup GET /api/v1/products/{id}/orders/{user_id}, to its pay and to its cancel.
type Order struct {
	ID        int64     `json:"order_id"`
	ProductID int64     `json:"product_id"`
	UserID    int64     `json:"user_id"`
	CreatedAt time.Time `json:"created_at"`
	// Status is one of the Status constants: paid (final; every order of a product without a
	// payment window), pending (a reservation to pay by PayBy), expired or cancelled (its unit
	// went back on sale).
	Status string     `json:"status"`
	PayBy  *time.Time `json:"pay_by,omitempty"`  // reservations only: pay before it
	PaidAt *time.Time `json:"paid_at,omitempty"` // reservations paid only
	// EndedAt is when a reservation expired or was cancelled.
	EndedAt *time.Time `json:"ended_at,omitempty"`
}

// The statuses of an Order. Pending and paid orders are live: one per user and product.
const (
	StatusPaid      = "paid"
	StatusPending   = "pending"
	StatusExpired   = "expired"
	StatusCancelled = "cancelled"
)

// Audit is the body of 200 to GET /api/v1/products/{id}/audit (admin): what PostgreSQL, and
// for the redis strategy the Redis gate, say about a product's sale, computed on each call.
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
	// Consistent: orders == sold, stock >= 0, nothing oversold, no duplicate user, and for
	// the redis and queue strategies Redis agrees with PostgreSQL.
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
	// Agrees: Redis's stock is PostgreSQL's less the queued purchases, its buyers are the
	// orders plus the queued purchases, and nothing is dead-lettered (or no buyer came yet).
	Agrees bool `json:"agrees"`
}

// Accepted is the 202 body of a queued purchase not written within QUEUE_WAIT, its unit taken;
// Order (and Location) name the order lookup, 200 once written.
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

// Readiness is the body of GET /readyz: 200 when this process can serve, 503 while it drains
// (with ?full=1, also when a shared backend was down at its last check).
type Readiness struct {
	// Checks holds "serving", the process's own state, and each shared backend's state at its
	// last background check, by name: StateOK or StateUnavailable, never the error, which
	// goes to the server's log.
	Checks map[string]string `json:"checks"`
	Status string            `json:"status"` // StateOK or StateUnavailable
}

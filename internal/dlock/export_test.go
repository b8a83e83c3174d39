package dlock

// Exported for the tests in package dlock_test.
var (
	Derive   = derive
	CheckKey = checkKey
)

// QueuedFor returns how many goroutines of c wait in its local queue for key.
func (c *Client) QueuedFor(key string) int { return c.queue.Waiters(key) }

package dlock

// Exported for the tests in package dlock_test.
var (
	Derive     = derive
	CheckKey   = checkKey
	Companions = companions
)

// ReleaseChannel returns key's release channel, which is also the name of the key that
// marks that someone waits for key.
func ReleaseChannel(key string) string { return derive(key, channelSuffix) }

// QueuedFor returns how many goroutines of c wait in its local queue for key.
func (c *Client) QueuedFor(key string) int { return c.queue.Waiters(key) }

// AcquireScript and ReleaseScript are the scripts of Obtain and Release, for benchmarks that
// run them bare.
var AcquireScript, ReleaseScript = acquireScript, releaseScript

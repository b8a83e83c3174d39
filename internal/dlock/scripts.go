package dlock

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The scripts run with Script.Run: EVALSHA, falling back to EVAL when the
// server does not have the script cached yet. Every key a script touches is
// passed in KEYS and shares the lock key's hash slot.
var (
	//go:embed scripts/acquire.lua
	acquireSrc string
	//go:embed scripts/release.lua
	releaseSrc string
	//go:embed scripts/refresh.lua
	refreshSrc string
	//go:embed scripts/pttl.lua
	pttlSrc string

	acquireScript = redis.NewScript(acquireSrc)
	releaseScript = redis.NewScript(releaseSrc)
	refreshScript = redis.NewScript(refreshSrc)
	pttlScript    = redis.NewScript(pttlSrc)
)

// notHeldPTTL is what pttl.lua returns when the key does not hold the token.
const notHeldPTTL = -3

package inventory

import (
	"embed"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts of the redis and queue strategies' Redis side. They run with Script.Run
// (EVALSHA, falling back to EVAL), and every key a script touches is in KEYS and shares the
// product's hash slot.
var (
	admitScript      = script("admit")
	giveBackScript   = script("giveback")
	confirmScript    = script("confirm")
	expiredScript    = script("expired")
	publishScript    = script("publish")
	enqueueScript    = script("enqueue")
	ackScript        = script("ack")
	deadLetterScript = script("deadletter")
	markScript       = script("mark")
	forgetScript     = script("forget")
)

//go:embed lua/*.lua
var lua embed.FS

// script returns the script in lua/<name>.lua; a name without a file is a bug of this
// package, and panics when the package is initialised.
func script(name string) *redis.Script {
	src, err := lua.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic("inventory: " + err.Error())
	}
	return redis.NewScript(string(src))
}

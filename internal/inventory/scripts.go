package inventory

import (
	"context"
	"embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts of the redis and queue strategies' Redis side. They run with Script.Run
// (EVALSHA, falling back to EVAL), and every key a script touches is in KEYS and shares the
// product's hash slot.
var (
	admitScript      = datasetScript("admit")
	giveBackScript   = script("giveback")
	confirmScript    = script("confirm")
	expiredScript    = script("expired")
	publishScript    = datasetScript("publish")
	enqueueScript    = datasetScript("enqueue")
	ackScript        = script("ack")
	readmitScript    = datasetScript("readmit")
	deadLetterScript = script("deadletter")
	markScript       = script("mark")
	forgetScript     = script("forget")
	returnScript     = script("return")
	stampCheckScript = datasetScript("stampcheck")
	recoverScript    = datasetScript("recover")
	stampScript      = datasetScript("stamp")
	restockScript    = script("restock")
	restockRecover   = datasetScript("restockrecover")
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

// datasetScript is script, after the prelude that names the data set Redis serves
// (lua/dataset.lua).
func datasetScript(name string) *redis.Script {
	prelude, err := lua.ReadFile("lua/dataset.lua")
	if err != nil {
		panic("inventory: " + err.Error())
	}
	src, err := lua.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic("inventory: " + err.Error())
	}
	return redis.NewScript(string(prelude) + string(src))
}

// onceCmd is a command that go-redis sends at most once (Cmder.NoRetry): a client with
// MaxRetries would send it again after a reply lost on a cut connection, and then report only
// the second try's error, such as a refused connection, which reads as "never sent" of a
// script that ran. One that was never written to a connection may still be sent.
type onceCmd struct{ *redis.Cmd }

// NoRetry tells go-redis not to send the command again once it was written.
func (onceCmd) NoRetry() bool { return true }

// runOnce runs s by EVALSHA sent at most once; when Redis does not have the script (NOSCRIPT:
// it restarted, or the script was never loaded), it loads it (SCRIPT LOAD, safe to repeat)
// and tries once more. The error is the one of the try that reached Redis, if any.
func runOnce(ctx context.Context, rdb redis.UniversalClient, s *redis.Script, keys []string, args ...any) *redis.Cmd {
	run := func() *redis.Cmd {
		argv := append(append([]any{"evalsha", s.Hash(), len(keys)}, anys(keys)...), args...)
		cmd := onceCmd{redis.NewCmd(ctx, argv...)}
		_ = rdb.Process(ctx, cmd)
		return cmd.Cmd
	}
	cmd := run()
	if err := cmd.Err(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		if err := s.Load(ctx, rdb).Err(); err != nil {
			cmd.SetErr(err)
			return cmd
		}
		cmd = run()
	}
	return cmd
}

func anys(keys []string) []any {
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}

// lineScript is a product's pre-queue's one step (lua/line.lua).
var lineScript = script("line")

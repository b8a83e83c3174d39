// Package labapi is what the lab build of the API (go build -tags lab ./cmd/api) plugs into
// the purchase service from outside: the teaching strategies naive and lab (the oversell lab's
// locks, internal/lab), the think_ms pause, and the lock history, a decorator of the
// service's product locks whose operations a checker (internal/history) judges knowing
// nothing of the service. Teaching and test code: the production build links none of it
// (docs/lab.md, docs/testing.md).
package labapi

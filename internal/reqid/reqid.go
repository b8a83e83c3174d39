// Package reqid carries a request's id: it checks an id a client sent (Valid), makes one
// (New), keeps it in a context (With, From), and puts it in every log line logged with that
// context (NewHandler, a slog.Handler wrapper). It knows nothing of HTTP frameworks: the HTTP
// edge (internal/httpapi) reads and echoes the header, and everything below it only passes
// the context on and logs with slog's *Context methods.
package reqid

import (
	"context"
	"log/slog"
	"math/rand/v2"
)

// Header is the HTTP header that carries the id, in its canonical form.
const Header = "X-Request-Id"

// MaxLen bounds the length of an id accepted from a client.
const MaxLen = 128

// Key is the attribute's key in log lines and the field's name in problem bodies.
const Key = "request_id"

type ctxKey struct{}

// With returns a copy of ctx that carries id.
func With(ctx context.Context, id string) context.Context {
	return &idContext{ctx, id}
}

// From returns the id ctx carries, or "".
func From(ctx context.Context) string {
	if c, ok := ctx.Value(ctxKey{}).(*idContext); ok {
		return c.id
	}
	return ""
}

// idContext is context.WithValue(ctx, ctxKey{}, id) in one allocation instead of two (the
// value and the string boxed in it): a request's id is set on every request. Its Value
// answers the key with itself, so that From reads the id without boxing it again.
type idContext struct {
	context.Context
	id string
}

func (c *idContext) Value(key any) any {
	if _, ok := key.(ctxKey); ok {
		return c
	}
	return c.Context.Value(key)
}

func (c *idContext) String() string { return "reqid.With(" + c.id + ")" }

// Valid reports whether id, sent by a client, may be used as is: 1 to MaxLen characters,
// each an ASCII letter or digit or one of - _ . : / + = @ (enough for UUIDs, nginx's and
// HAProxy's ids, base64 and trace ids; nothing that needs escaping in a header, a JSON string
// or a log line).
func Valid(id string) bool {
	if len(id) == 0 || len(id) > MaxLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !safe[id[i]] {
			return false
		}
	}
	return true
}

// safe marks the bytes Valid accepts.
var safe = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "-_.:/+=@" {
		t[c] = true
	}
	return t
}()

// New returns a new id: 32 lowercase hex digits (128 random bits, unique in practice but not
// secret: math/rand/v2's generator, which costs no system call). It is safe for concurrent use.
func New() string {
	const hex = "0123456789abcdef"
	var b [32]byte
	for half, v := range [2]uint64{rand.Uint64(), rand.Uint64()} {
		for i := range 16 {
			b[half*16+i] = hex[v>>(60-4*i)&0xf]
		}
	}
	return string(b[:])
}

// NewHandler returns a slog.Handler that adds request_id=<id> to each record logged with a
// context that carries an id (slog's *Context methods; Logger.Info and the like pass
// context.Background and get none), then passes it to h. The attribute lands where the
// record's own attributes do: inside a group opened with WithGroup, if any.
func NewHandler(h slog.Handler) slog.Handler { return handler{h} }

type handler struct{ inner slog.Handler }

func (h handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	if id := From(ctx); id != "" {
		r.AddAttrs(slog.String(Key, id))
	}
	return h.inner.Handle(ctx, r)
}

func (h handler) WithAttrs(as []slog.Attr) slog.Handler { return handler{h.inner.WithAttrs(as)} }
func (h handler) WithGroup(name string) slog.Handler    { return handler{h.inner.WithGroup(name)} }

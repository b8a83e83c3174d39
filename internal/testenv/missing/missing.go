// Package missing is how a test that cannot run here says so: a server's variable, a binary or
// root is missing. It skips the test, as a plain `go test ./...` on a laptop wants, or fails it
// where everything is meant to be there: with SECKILL_REQUIRE_ALL=1, which CI sets, a skip
// would read as a pass. A test skipped with -short (testenv.SkipShort) is skipped either way.
//
// It imports only the standard library, so that every test helper can use it, those of
// internal/launch and internal/testenv/servers included.
package missing

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

// Env is the variable that turns the skips of this package into failures: a boolean, as
// strconv.ParseBool reads it; unset or empty is false.
const Env = "SECKILL_REQUIRE_ALL"

// Skip skips t, saying why (what is missing and how to get it), or fails t with why when
// SECKILL_REQUIRE_ALL is true. A SECKILL_REQUIRE_ALL that is not a boolean fails t too.
func Skip(t testing.TB, why string) {
	t.Helper()
	required, err := Required()
	if err != nil {
		t.Fatalf("%s (the test cannot run here: %s)", err, why)
	}
	if required {
		t.Fatalf("%s (%s=1: a test that cannot run here fails)", why, Env)
	}
	t.Skip(why)
}

// Skipf is Skip with a message formatted as fmt.Sprintf does.
func Skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	Skip(t, fmt.Sprintf(format, args...))
}

// Required reports whether SECKILL_REQUIRE_ALL is true, or an error naming it and its value
// when it is not a boolean.
func Required() (bool, error) {
	v := os.Getenv(Env)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s %q: want true or false (or 1, 0)", Env, v)
	}
	return b, nil
}

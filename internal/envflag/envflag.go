// Package envflag defines command-line flags whose defaults come from environment variables,
// read through an injected getenv, for commands that are configured by the environment and
// let flags override it (cmd/api, cmd/loadtest). Tests pass their own getenv; main passes
// os.Getenv.
//
// Typed flags (Duration, Int, Bool) show their type in the usage message, as the flag
// package's own do, and parse their variable as their flag does: a bool accepts exactly what
// strconv.ParseBool accepts. A variable that does not parse is reported by Err, naming it.
//
// A quiet flag never shows its default in the usage message. -h and a flag error print every
// flag with its default, and a default read from the environment may hold a password or a
// token: define such flags with QuietVar. Files gives each secret a KEY_FILE form.
package envflag

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"
)

// Set defines flags whose defaults come from getenv; copies share Err. Not safe for concurrent use.
type Set struct {
	fs     *flag.FlagSet
	getenv func(string) string
	bad    *[]badValue // variables whose values did not parse, for Err
}

// badValue is a variable whose value did not parse, and the flag that overrides it.
type badValue struct {
	flag string
	err  error
}

// New returns a Set that defines flags on fs with defaults read through getenv.
func New(fs *flag.FlagSet, getenv func(string) string) Set {
	return Set{fs: fs, getenv: getenv, bad: new([]badValue)}
}

// Get returns key's value, or def when it is empty.
func (s Set) Get(key, def string) string {
	if v := s.getenv(key); v != "" {
		return v
	}
	return def
}

// String defines a string flag defaulting to Get(key, def).
func (s Set) String(name, key, def, usage string) *string {
	return s.fs.String(name, s.Get(key, def), usage)
}

// StringVar defines a string flag in p defaulting to Get(key, def).
func (s Set) StringVar(p *string, name, key, def, usage string) {
	s.fs.StringVar(p, name, s.Get(key, def), usage)
}

// DurationVar defines a duration flag in p defaulting to key's value, else def.
func (s Set) DurationVar(p *time.Duration, name, key string, def time.Duration, usage string) {
	s.fs.DurationVar(p, name, lookup(s, name, key, def, time.ParseDuration, "a duration such as 300ms or 2s"), usage)
}

// IntVar defines an int flag in p defaulting to key's value, else def.
func (s Set) IntVar(p *int, name, key string, def int, usage string) {
	s.fs.IntVar(p, name, lookup(s, name, key, def, strconv.Atoi, "an integer"), usage)
}

// BoolVar defines a bool flag in p defaulting to key's value, else def.
func (s Set) BoolVar(p *bool, name, key string, def bool, usage string) {
	s.fs.BoolVar(p, name, lookup(s, name, key, def, strconv.ParseBool,
		"true or false (or 1, t, T, TRUE, True, 0, f, F, FALSE, False)"), usage)
}

// lookup returns key's value parsed by parse, or def when key is unset or empty, or when its
// value does not parse: that is recorded for Err, as wanting want.
func lookup[T any](s Set, name, key string, def T, parse func(string) (T, error), want string) T {
	text := s.getenv(key)
	if text == "" {
		return def
	}
	v, err := parse(text)
	if err != nil {
		*s.bad = append(*s.bad, badValue{name, fmt.Errorf("%s %q: want %s", key, text, want)})
		return def
	}
	return v
}

// Err returns the joined parse errors of variables whose flags were not set. Call it after Parse.
func (s Set) Err() error {
	set := map[string]bool{}
	s.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var errs []error
	for _, b := range *s.bad {
		if !set[b.flag] {
			errs = append(errs, b.err)
		}
	}
	return errors.Join(errs...)
}

// QuietVar is StringVar for a secret: usage never shows its default.
func (s Set) QuietVar(p *string, name, key, def, usage string) {
	*p = s.Get(key, def)
	s.fs.Var(quiet{p}, name, usage)
}

// quiet is a string flag.Value whose String is empty, so flag prints no default.
type quiet struct{ p *string }

func (q quiet) String() string { return "" }

func (q quiet) Set(v string) error {
	*q.p = v
	return nil
}

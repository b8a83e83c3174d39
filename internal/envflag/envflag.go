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

// Set defines flags on one flag.FlagSet with defaults read through getenv. It is a small
// value: copy it freely; the copies share what Err reports. It is as safe for concurrent use
// as its FlagSet, which is not.
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

// Get returns the value of the environment variable key, or def when it is unset or empty.
func (s Set) Get(key, def string) string {
	if v := s.getenv(key); v != "" {
		return v
	}
	return def
}

// String defines a string flag whose default is Get(key, def) and returns its address.
func (s Set) String(name, key, def, usage string) *string {
	return s.fs.String(name, s.Get(key, def), usage)
}

// StringVar defines a string flag stored in p whose default is Get(key, def).
func (s Set) StringVar(p *string, name, key, def, usage string) {
	s.fs.StringVar(p, name, s.Get(key, def), usage)
}

// DurationVar defines a time.Duration flag stored in p whose default is the value of key, as
// time.ParseDuration reads it, or def when key is unset or empty.
func (s Set) DurationVar(p *time.Duration, name, key string, def time.Duration, usage string) {
	s.fs.DurationVar(p, name, lookup(s, name, key, def, time.ParseDuration, "a duration such as 300ms or 2s"), usage)
}

// IntVar defines an int flag stored in p whose default is the value of key, as strconv.Atoi
// reads it, or def when key is unset or empty.
func (s Set) IntVar(p *int, name, key string, def int, usage string) {
	s.fs.IntVar(p, name, lookup(s, name, key, def, strconv.Atoi, "an integer"), usage)
}

// BoolVar defines a bool flag stored in p whose default is the value of key, as
// strconv.ParseBool reads it, or def when key is unset or empty.
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

// Err returns, joined, an error naming each variable of a typed flag whose value did not
// parse, except those whose flag was set on the command line: the flag overrides it. Call it
// after the FlagSet's Parse.
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

// QuietVar is StringVar for a value that may be a secret: the usage message never shows its
// default, so it should say what the default is when that is not secret.
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

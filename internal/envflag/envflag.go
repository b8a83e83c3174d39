// Package envflag defines command-line flags whose defaults come from environment variables,
// read through an injected getenv, for commands that are configured by the environment and
// let flags override it (cmd/api, cmd/loadtest). Tests pass their own getenv; main passes
// os.Getenv.
//
// A quiet flag never shows its default in the usage message. -h and a flag error print every
// flag with its default, and a default read from the environment may hold a password or a
// token: define such flags with QuietVar.
package envflag

import "flag"

// Set defines flags on one flag.FlagSet with defaults read through getenv. It is a small
// value: copy it freely. It is as safe for concurrent use as its FlagSet, which is not.
type Set struct {
	fs     *flag.FlagSet
	getenv func(string) string
}

// New returns a Set that defines flags on fs with defaults read through getenv.
func New(fs *flag.FlagSet, getenv func(string) string) Set { return Set{fs: fs, getenv: getenv} }

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

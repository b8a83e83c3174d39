package envflag_test

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/envflag"
)

func TestDefaultsFromTheEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{"ADDR": ":9090", "TOKEN": "s3cr3t-token", "EMPTY": ""}
	tests := []struct {
		name               string
		args               []string
		addr, token, empty string
	}{
		{"the environment", nil, ":9090", "s3cr3t-token", "fallback"},
		{"flags win", []string{"-addr", ":1", "-token", "other", "-empty", "set"}, ":1", "other", "set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			e := envflag.New(fs, func(k string) string { return env[k] })
			addr := e.String("addr", "ADDR", ":8080", "listen address")
			var token, empty string
			e.QuietVar(&token, "token", "TOKEN", "", "a secret")
			e.StringVar(&empty, "empty", "EMPTY", "fallback", "unset or empty: the default")
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if *addr != tt.addr || token != tt.token || empty != tt.empty {
				t.Errorf("addr %q, token %q, empty %q; want %q, %q, %q", *addr, token, empty, tt.addr, tt.token, tt.empty)
			}
		})
	}
}

// TestQuietUsage: the usage message shows a plain flag's default and never a quiet one's.
func TestQuietUsage(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(&out)
	e := envflag.New(fs, func(k string) string { return map[string]string{"ADDR": ":9090", "TOKEN": "s3cr3t-token"}[k] })
	e.String("addr", "ADDR", ":8080", "listen address")
	var token string
	e.QuietVar(&token, "token", "TOKEN", "", "a secret")
	if err := fs.Parse([]string{"-h"}); err != flag.ErrHelp {
		t.Fatalf("-h = %v, want flag.ErrHelp", err)
	}
	if got := out.String(); !strings.Contains(got, `(default ":9090")`) || !strings.Contains(got, "-token") ||
		strings.Contains(got, "s3cr3t") {
		t.Fatalf("usage shows the wrong defaults:\n%s", got)
	}
}

// TestTypedFlags: a typed flag's default is its variable parsed as the flag would parse it,
// and the usage message names its type.
func TestTypedFlags(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TTL": "1500ms", "CONNS": "7", "MIGRATE": "F"}
	var out strings.Builder
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(&out)
	e := envflag.New(fs, func(k string) string { return env[k] })
	var ttl, wait time.Duration
	var conns, batch int
	var migrate, verbose bool
	e.DurationVar(&ttl, "ttl", "TTL", 2*time.Second, "lease")
	e.DurationVar(&wait, "wait", "WAIT", time.Second, "wait")
	e.IntVar(&conns, "conns", "CONNS", 20, "pool size")
	e.IntVar(&batch, "batch", "BATCH", 128, "batch size")
	e.BoolVar(&migrate, "migrate", "MIGRATE", true, "migrate at start")
	e.BoolVar(&verbose, "verbose", "VERBOSE", false, "say more")
	if err := fs.Parse([]string{"-batch", "3"}); err != nil {
		t.Fatal(err)
	}
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	if ttl != 1500*time.Millisecond || wait != time.Second || conns != 7 || batch != 3 || migrate || verbose {
		t.Errorf("ttl %s, wait %s, conns %d, batch %d, migrate %t, verbose %t; want 1.5s, 1s, 7, 3, false, false",
			ttl, wait, conns, batch, migrate, verbose)
	}
	fs.PrintDefaults()
	for _, want := range []string{"-ttl duration", "(default 1.5s)", "-conns int", "(default 7)", "-migrate\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, out.String())
		}
	}
}

// TestBoolIsParseBool: a bool variable accepts exactly what strconv.ParseBool accepts, and
// anything else is an error naming it, not false.
func TestBoolIsParseBool(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False",
		"yes", "no", "on", "off", "tRUE", " true", "2", "y"} {
		want, parseErr := strconv.ParseBool(text)
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		e := envflag.New(fs, func(k string) string { return map[string]string{"MIGRATE_ON_START": text}[k] })
		got := !want // the default is never the answer
		e.BoolVar(&got, "migrate", "MIGRATE_ON_START", !want, "migrate at start")
		if err := fs.Parse(nil); err != nil {
			t.Fatal(err)
		}
		err := e.Err()
		switch {
		case parseErr == nil && (err != nil || got != want):
			t.Errorf("MIGRATE_ON_START=%q: %t, err %v; want %t", text, got, err, want)
		case parseErr != nil && (err == nil || !strings.Contains(err.Error(), "MIGRATE_ON_START")):
			t.Errorf("MIGRATE_ON_START=%q: err %v, want one naming MIGRATE_ON_START", text, err)
		}
	}
}

// TestBadValueOverriddenByFlag: a variable that does not parse is an error unless its flag,
// which overrides it, is set.
func TestBadValueOverriddenByFlag(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TTL": "soon", "CONNS": "many"}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{nil, []string{`TTL "soon"`, `CONNS "many"`}},
		{[]string{"-ttl", "3s"}, []string{`CONNS "many"`}},
		{[]string{"-ttl", "3s", "-conns", "2"}, nil},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		e := envflag.New(fs, func(k string) string { return env[k] })
		var ttl time.Duration
		var conns int
		e.DurationVar(&ttl, "ttl", "TTL", time.Second, "lease")
		e.IntVar(&conns, "conns", "CONNS", 1, "pool size")
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		err := e.Err()
		if (err == nil) != (tt.want == nil) {
			t.Fatalf("%q: err %v, want errors %q", tt.args, err, tt.want)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: err %v, want it to contain %q", tt.args, err, w)
			}
		}
		if strings.Contains(fmt.Sprint(err), "TTL") != slices.Contains(tt.want, `TTL "soon"`) {
			t.Errorf("%q: err %v names TTL, whose flag overrides it", tt.args, err)
		}
	}
}

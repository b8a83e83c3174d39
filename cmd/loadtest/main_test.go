package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/buildinfo"
)

// TestMain lets the test binary stand in for the program when the baseline starts its own
// executable as a ceiling process (loadtest ceiling).
// With LOADTEST_AS_MAIN=1 it is the program itself, for the tests of its exit status.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ceilingCommand || os.Getenv("LOADTEST_AS_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"-version", "version"} {
		var out bytes.Buffer
		err := run(context.Background(), []string{"loadtest", arg}, func(string) string { return "" }, &out, io.Discard)
		if got := exitCode(err); got != exitOK {
			t.Fatalf("loadtest %s: exit %d (%v)", arg, got, err)
		}
		if got, want := out.String(), "loadtest "+buildinfo.Read().String()+"\n"; got != want {
			t.Fatalf("loadtest %s printed %q, want %q", arg, got, want)
		}
	}
}

// TestCommandHelp: CMD -h prints that command's help and flags, and only its flags, with no
// default that may be a secret.
func TestCommandHelp(t *testing.T) {
	t.Parallel()
	env := map[string]string{"ADMIN_TOKEN": "admin-s3cr3t", "DATABASE_URL": "postgres://u:pg-s3cr3t@db/seckill"}
	tests := []struct {
		cmd       string
		want, not []string
	}{
		{"run", []string{"usage: loadtest run", "-strategy ", "-targets", "-admin-token", "-database-url"}, []string{"-strategies", "-baseline"}},
		{"compare", []string{"usage: loadtest compare", "-strategies", "-baseline", "-runs"}, []string{"-strategy "}},
		{"baseline", []string{"usage: loadtest baseline", "-workers", "-runs"}, []string{"-strategy", "-expect-naive-oversell"}},
		{"ceiling", []string{"usage: loadtest ceiling", "-addr"}, []string{"-targets"}},
		{"version", []string{"usage: loadtest version"}, []string{"-targets"}},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		err := run(context.Background(), []string{"loadtest", tt.cmd, "-h"}, func(k string) string { return env[k] }, io.Discard, &out)
		if got := exitCode(err); got != exitOK {
			t.Errorf("%s -h: exit %d (%v)", tt.cmd, got, err)
		}
		help := out.String()
		for _, w := range tt.want {
			if !strings.Contains(help, w) {
				t.Errorf("%s -h lacks %q:\n%s", tt.cmd, w, help)
			}
		}
		for _, n := range append(tt.not, "s3cr3t") {
			if strings.Contains(help, n) {
				t.Errorf("%s -h shows %q:\n%s", tt.cmd, n, help)
			}
		}
	}
}

// TestUsage: the usage message lists every command of the table.
func TestUsage(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"loadtest", "-h"}, func(string) string { return "" }, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, c := range commands {
		if !strings.Contains(out.String(), "  "+c.name+" ") {
			t.Errorf("usage lacks %s:\n%s", c.name, out.String())
		}
	}
	if !strings.Contains(out.String(), "ADMIN_TOKEN_FILE") {
		t.Errorf("usage does not name the _FILE forms:\n%s", out.String())
	}
}

// TestConfigFromFiles: each secret may be read from the file its _FILE form names, by every
// command (here ui, which refuses a token that is too short or is the API's ADMIN_TOKEN before
// it serves), and a secret given twice or in a file that cannot be read is a usage error
// that never shows the secret.
func TestConfigFromFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	short, long := write("short", "s3cr3t\n"), write("long", "a-s3cr3t-of-24-characters\n")
	missing := filepath.Join(dir, "missing")
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"the page's token from a file", map[string]string{"LOADTEST_UI_ACCESS_TOKEN_FILE": short}, "-access-token: 6 characters, want at least 16"},
		{"the admin token from a file", map[string]string{"LOADTEST_UI_ACCESS_TOKEN_FILE": long, "ADMIN_TOKEN_FILE": long},
			"-access-token: is the API's ADMIN_TOKEN"},
		{"both forms", map[string]string{"ADMIN_TOKEN": "admin-s3cr3t", "ADMIN_TOKEN_FILE": long}, "ADMIN_TOKEN and ADMIN_TOKEN_FILE are both set"},
		{"a missing file", map[string]string{"DATABASE_URL_FILE": missing}, "DATABASE_URL_FILE: open " + missing},
	}
	// Bounded, should a check regress and the page start serving.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tt := range tests {
		// -public wants a token; the checks run before the page listens.
		err := run(ctx, []string{"loadtest", "ui", "-public", "-addr", "127.0.0.1:0"},
			func(k string) string { return tt.env[k] }, io.Discard, io.Discard)
		if got := exitCode(err); got != exitUsage || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: exit %d (%v), want %d and an error containing %q", tt.name, got, err, exitUsage, tt.want)
		} else if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: the error shows a secret: %v", tt.name, err)
		}
	}
	// version prints the build whatever the environment says.
	err := run(context.Background(), []string{"loadtest", "version"}, func(k string) string { return map[string]string{"ADMIN_TOKEN_FILE": missing}[k] },
		io.Discard, io.Discard)
	if err != nil {
		t.Errorf("loadtest version with a bad ADMIN_TOKEN_FILE: %v", err)
	}
}

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/buildinfo"
)

// TestMain lets the test binary stand in for the program when the baseline starts its own
// executable as a ceiling process (loadtest ceiling).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ceilingCommand {
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
}

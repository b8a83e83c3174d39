package envflag_test

import (
	"flag"
	"strings"
	"testing"

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

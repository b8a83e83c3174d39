package reqid_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/reqid"
)

func TestValid(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		id   string
		want bool
	}{
		{"3f2a9c1e-7b4d-4e1a-9c3b-0d8e6f5a4b21", true},
		{"7F000001:C8F2_6564A1B2_0001", true},
		{"Root=1-67891233-abcdef012345678912345678", true},
		{strings.Repeat("a", reqid.MaxLen), true},
		{"", false},
		{strings.Repeat("a", reqid.MaxLen+1), false},
		{"a b", false},
		{"a\nlevel=ERROR", false},
		{`a"b`, false},
		{"é", false},
		{"a;b", false},
	} {
		if got := reqid.Valid(tt.id); got != tt.want {
			t.Errorf("Valid(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		id := reqid.New()
		if len(id) != 32 || !reqid.Valid(id) || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("New() = %q, want 32 lowercase hex digits", id)
		}
		if seen[id] {
			t.Fatalf("New() returned %q twice", id)
		}
		seen[id] = true
	}
}

// TestHandler: a line logged with a context that carries an id has it, also through
// WithAttrs and WithGroup; a line logged without one has none.
func TestHandler(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(reqid.NewHandler(slog.NewJSONHandler(&buf, nil))).With("app", "seckill")
	ctx := reqid.With(context.Background(), "abc-123")
	log.InfoContext(ctx, "with", "k", 1)
	log.Info("without")
	log.WithGroup("g").WarnContext(ctx, "grouped")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), buf.String())
	}
	var rec []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		rec = append(rec, m)
	}
	if got := rec[0][reqid.Key]; got != "abc-123" || rec[0]["app"] != "seckill" {
		t.Errorf("line with the id's context: %s", lines[0])
	}
	if _, ok := rec[1][reqid.Key]; ok {
		t.Errorf("line without a context has an id: %s", lines[1])
	}
	if g, _ := rec[2]["g"].(map[string]any); g[reqid.Key] != "abc-123" {
		t.Errorf("grouped line: %s", lines[2])
	}
	if got := reqid.From(context.Background()); got != "" {
		t.Errorf("From(Background) = %q, want empty", got)
	}
}

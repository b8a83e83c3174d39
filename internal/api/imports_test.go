package api_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestImports keeps the dependency direction: the contract imports only the standard
// library, the client only the contract besides, and the domain packages never the contract.
func TestImports(t *testing.T) {
	const mod = "github.com/seckill/seckill/"
	for _, tt := range []struct {
		dir     string
		allowed func(path string) bool
	}{
		{".", std},
		{"client", func(p string) bool { return std(p) || p == mod+"internal/api" }},
		{"../inventory", func(p string) bool { return !strings.HasPrefix(p, mod+"internal/api") }},
		{"../order", func(p string) bool { return !strings.HasPrefix(p, mod+"internal/api") }},
	} {
		pkg, err := build.ImportDir(tt.dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pkg.Imports {
			if !tt.allowed(p) {
				t.Errorf("%s imports %s", tt.dir, p)
			}
		}
	}
}

// std reports whether path is in the standard library: its first element has no dot.
func std(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

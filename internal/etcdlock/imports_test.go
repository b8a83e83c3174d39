package etcdlock_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestImports: the lock imports nothing of the application, like internal/dlock, and nothing
// of Redis: its dependencies are the standard library, etcd's client, and internal/keyed
// (per-key mutexes) and internal/lockrun (Do and DoMulti), both standard library only.
func TestImports(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkg.Imports {
		first, _, _ := strings.Cut(p, "/")
		if strings.Contains(first, ".") && !strings.HasPrefix(p, "go.etcd.io/etcd/") && p != "github.com/seckill/seckill/internal/keyed" && p != "github.com/seckill/seckill/internal/lockrun" {
			t.Errorf("etcdlock imports %s", p)
		}
	}
}

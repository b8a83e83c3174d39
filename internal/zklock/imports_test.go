package zklock_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestImports: the lock imports nothing of the application, like internal/dlock and
// internal/etcdlock: its dependencies are the standard library, the go-zookeeper client and
// internal/lockrun (Do and DoMulti, standard library only).
func TestImports(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkg.Imports {
		first, _, _ := strings.Cut(p, "/")
		if strings.Contains(first, ".") && !strings.HasPrefix(p, "github.com/go-zookeeper/zk") && p != "github.com/seckill/seckill/internal/lockrun" {
			t.Errorf("zklock imports %s", p)
		}
	}
}

package boundarycheck_test

import (
	"slices"
	"testing"
)

// The packages the boundaries name.
var (
	// teaching is the lab's code and the lock history's checker, with the libraries only they
	// link: what the production service must never link.
	teaching = []string{mod + "internal/lab", mod + "internal/labapi", mod + "internal/history",
		"github.com/anishathalye/porcupine", "github.com/go-redsync/redsync", "github.com/bsm/redislock"}
	// tools are the load tester's, the lab runner's and the tests' own packages.
	tools = []string{mod + "internal/launch", mod + "internal/testenv", mod + "internal/loadgen", mod + "internal/labrun",
		mod + "internal/liveui", mod + "internal/timeline", mod + "internal/benchrec", mod + "internal/ceiling"}
	// service is what serves the API: the tools reach it only over HTTP, through the contract.
	service = []string{mod + "internal/app", mod + "internal/httpapi", mod + "internal/order", mod + "internal/inventory",
		mod + "internal/dlock", mod + "internal/etcdlock", mod + "internal/lab", mod + "internal/labapi", mod + "db",
		"gorm.io", "github.com/gin-gonic"}
)

// boundaries are the guards, one per boundary of docs/testing.md ("Boundaries"). bad is a
// package each keeps out, for its negative control.
var boundaries = []struct {
	boundary
	bad string
}{
	{boundary{name: "cmd/api links only what sells: no lab, lock history, checker or test launcher",
		roots: []string{mod + "cmd/api"}, forbid: func(p string) bool { return under(p, append(teaching, tools...)...) },
		need: []string{mod + "internal/app", mod + "internal/order"}},
		mod + "internal/lab"},
	{boundary{name: "the lab build of cmd/api links the lab, and no test launcher or load tester",
		roots: []string{mod + "cmd/api"}, tags: "lab", forbid: func(p string) bool { return under(p, tools...) },
		need: []string{mod + "internal/labapi", mod + "internal/lab", mod + "internal/history"}},
		mod + "internal/launch"},
	{boundary{name: "cmd/loadtest talks to the service through its contract (gin only in the bare-gin baseline, internal/ceiling)",
		roots: []string{mod + "cmd/loadtest"}, forbid: func(p string) bool {
			return under(p, append(service, mod+"internal/launch", mod+"internal/testenv")...)
		},
		through: []string{mod + "internal/ceiling"},
		need:    []string{mod + "internal/api", mod + "internal/api/client", mod + "internal/keys"}},
		mod + "internal/order"},
	{boundary{name: "the service's packages link no teaching code and no tool",
		roots: []string{mod + "internal/app", mod + "internal/httpapi", mod + "internal/order", mod + "internal/inventory",
			mod + "internal/metrics", mod + "internal/dlock", mod + "internal/etcdlock"},
		forbid: func(p string) bool { return under(p, append(teaching, tools...)...) }},
		mod + "internal/history"},
	{boundary{name: "the domain packages know nothing of HTTP: not the contract, the handlers, the wiring or gin",
		roots: []string{mod + "internal/inventory", mod + "internal/order", mod + "internal/dlock", mod + "internal/etcdlock"},
		forbid: func(p string) bool {
			return under(p, mod+"internal/api", mod+"internal/httpapi", mod+"internal/app", "github.com/gin-gonic")
		}},
		mod + "internal/api"},
	{boundary{name: "inventory knows nothing of orders",
		roots: []string{mod + "internal/inventory"}, forbid: func(p string) bool { return under(p, mod+"internal/order") }},
		mod + "internal/order"},
	{boundary{name: "the contract links only the standard library",
		roots: []string{mod + "internal/api"}, forbid: func(p string) bool { return !std(p) && p != mod+"internal/api" }},
		"github.com/gin-gonic/gin"},
	{boundary{name: "the contract's client links only the contract besides",
		roots:  []string{mod + "internal/api/client"},
		forbid: func(p string) bool { return !std(p) && p != mod+"internal/api" && p != mod+"internal/api/client" }},
		mod + "internal/order"},
}

// TestBoundaries: every binary and package set links nothing its boundary keeps out, as the
// go command lists what it links (not only its direct imports).
func TestBoundaries(t *testing.T) {
	t.Parallel()
	for _, b := range boundaries {
		g := list(t, b.tags, b.roots...)
		for _, v := range violations(g, b.boundary) {
			t.Errorf("%s: %s", b.name, v)
		}
	}
}

// TestBoundariesCanFail is the negative control of each guard: the graph as listed, with an
// import of a package the boundary keeps out added to its first root, or without a package it
// needs, must be reported; so must the lab build's real graph against cmd/api's boundary, and
// gin reached by cmd/loadtest other than through the baseline.
func TestBoundariesCanFail(t *testing.T) {
	t.Parallel()
	for _, b := range boundaries {
		g := list(t, b.tags, b.roots...)
		bad := clone(g)
		root := b.roots[0]
		bad[root] = append(slices.Clone(bad[root]), b.bad)
		if len(violations(bad, b.boundary)) == 0 {
			t.Errorf("%s: an import of %s was not reported", b.name, b.bad)
		}
		for _, n := range b.need {
			missing := clone(g)
			delete(missing, n)
			if len(violations(missing, b.boundary)) == 0 {
				t.Errorf("%s: %s missing was not reported", b.name, n)
			}
		}
	}
	if len(violations(list(t, "lab", mod+"cmd/api"), boundaries[0].boundary)) == 0 {
		t.Error("the lab build of cmd/api passes the production build's boundary")
	}
	loadtest := boundaries[2].boundary
	g := list(t, "", loadtest.roots...)
	g[loadtest.roots[0]] = append(slices.Clone(g[loadtest.roots[0]]), "github.com/gin-gonic/gin")
	if len(violations(g, loadtest)) == 0 {
		t.Error("gin linked by cmd/loadtest outside the baseline was not reported")
	}
}

func clone(g graph) graph {
	c := make(graph, len(g))
	for k, v := range g {
		c[k] = v
	}
	return c
}

package boundarycheck_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// mod is the module's import path prefix.
const mod = "github.com/seckill/seckill/"

// graph maps each package a root links to the packages it imports.
type graph map[string][]string

// boundary is what a set of packages may link.
type boundary struct {
	name  string   // what it keeps, for the failure message
	roots []string // the packages whose dependencies are checked
	tags  string   // build tags, "" for none
	// forbid reports whether a linked package is kept out (by its import path).
	forbid func(path string) bool
	// through, if set, are packages through which a forbidden package may still be reached:
	// the walk does not enter them (the bare-gin baseline of cmd/loadtest's ceiling).
	through []string
	// need are packages that must be linked: a guard that checks an empty list proves nothing.
	need []string
}

// violations returns what g, the graph of b's roots, breaks of b: each forbidden package
// reached from a root without passing through b.through, as "root -> ... -> package", and
// each package of b.need that is not linked.
func violations(g graph, b boundary) []string {
	var out []string
	for _, root := range b.roots {
		parent := map[string]string{root: ""}
		queue := []string{root}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			if b.forbid(p) {
				out = append(out, path(parent, p))
				continue
			}
			if slices.Contains(b.through, p) {
				continue
			}
			for _, q := range g[p] {
				if _, seen := parent[q]; !seen {
					parent[q] = p
					queue = append(queue, q)
				}
			}
		}
		for _, n := range b.need {
			if _, ok := g[n]; !ok {
				out = append(out, root+" does not link "+n)
			}
		}
	}
	return out
}

// path is the import chain from the walk's root to p.
func path(parent map[string]string, p string) string {
	chain := []string{p}
	for q := parent[p]; q != ""; q = parent[q] {
		chain = append(chain, q)
	}
	slices.Reverse(chain)
	return strings.Join(chain, " -> ")
}

// list is the dependency graph of roots as the go command builds it with tags: every package
// they link (go list -deps), with its imports.
func list(t *testing.T, tags string, roots ...string) graph {
	t.Helper()
	args := []string{"list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, roots...)...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %v: %v\n%s", roots, err, stderr.Bytes())
	}
	g := graph{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		g[fields[0]] = fields[1:]
	}
	return g
}

// under reports whether path is one of pkgs or inside one of them.
func under(path string, pkgs ...string) bool {
	for _, p := range pkgs {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// std reports whether path is in the standard library: its first element has no dot.
func std(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

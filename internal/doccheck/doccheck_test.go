package doccheck_test

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The limits, in words as strings.Fields counts them in the comment's text.
const (
	maxDoc        = 100 // a declaration's doc comment, field docs included
	maxPackageDoc = 299 // a package doc, all of its files' package comments together
	maxMedian     = 13  // the median of the exported declarations' doc comments
)

// docComment is one doc comment of a declaration.
type docComment struct {
	pos      token.Position
	name     string
	exported bool
	words    int
}

// moduleRoot is the directory of go.mod, above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// parseModule parses every non-test Go file under root, testdata and hidden directories aside.
func parseModule(t *testing.T, root string) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fset, files
}

func words(g *ast.CommentGroup) int {
	if g == nil {
		return 0
	}
	return len(strings.Fields(g.Text()))
}

// declDocs lists the doc comments of f's declarations: functions and methods, type, const
// and var declarations and their specs, struct fields and interface methods.
func declDocs(fset *token.FileSet, f *ast.File) []docComment {
	var out []docComment
	add := func(g *ast.CommentGroup, name string, exported bool) {
		if g != nil {
			out = append(out, docComment{fset.Position(g.Pos()), name, exported, words(g)})
		}
	}
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			add(decl.Doc, decl.Name.Name, decl.Name.IsExported() && receiverExported(decl))
		case *ast.GenDecl:
			if decl.Tok == token.IMPORT {
				continue
			}
			first, exported := "", false
			for _, spec := range decl.Specs {
				name, exp := specName(spec)
				first = cmp.Or(first, name)
				exported = exported || exp
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					add(spec.Doc, name, exp)
					ast.Inspect(spec.Type, func(n ast.Node) bool {
						if field, ok := n.(*ast.Field); ok && field.Doc != nil {
							fname, fexp := name+".(embedded)", exp
							if len(field.Names) > 0 {
								fname, fexp = name+"."+field.Names[0].Name, exp && field.Names[0].IsExported()
							}
							add(field.Doc, fname, fexp)
						}
						return true
					})
				case *ast.ValueSpec:
					add(spec.Doc, name, exp)
				}
			}
			add(decl.Doc, first, exported)
		}
	}
	return out
}

func specName(spec ast.Spec) (string, bool) {
	switch spec := spec.(type) {
	case *ast.TypeSpec:
		return spec.Name.Name, spec.Name.IsExported()
	case *ast.ValueSpec:
		exported := false
		for _, n := range spec.Names {
			exported = exported || n.IsExported()
		}
		return spec.Names[0].Name, exported
	}
	return "", false
}

// receiverExported reports whether fn is a function, or a method of an exported type.
func receiverExported(fn *ast.FuncDecl) bool {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return true
	}
	t := fn.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

// packageDocs sums the words of each package's doc comments, by directory and package name.
func packageDocs(fset *token.FileSet, files []*ast.File) map[string]int {
	out := map[string]int{}
	for _, f := range files {
		if f.Doc != nil {
			out[filepath.Dir(fset.Position(f.Package).Filename)+" package "+f.Name.Name] += words(f.Doc)
		}
	}
	return out
}

// violations lists the doc comments over maxDoc words and the package docs over
// maxPackageDoc, longest first, then by name.
func violations(fset *token.FileSet, files []*ast.File, root string) []string {
	type long struct {
		words int
		what  string
	}
	var all []long
	for _, f := range files {
		for _, d := range declDocs(fset, f) {
			if d.words > maxDoc {
				rel, _ := filepath.Rel(root, d.pos.Filename)
				all = append(all, long{d.words, fmt.Sprintf("%s:%d %s: %d words (limit %d)", rel, d.pos.Line, d.name, d.words, maxDoc)})
			}
		}
	}
	for pkg, w := range packageDocs(fset, files) {
		if w > maxPackageDoc {
			rel, _ := filepath.Rel(root, pkg)
			all = append(all, long{w, fmt.Sprintf("%s: package doc of %d words (limit %d)", rel, w, maxPackageDoc)})
		}
	}
	slices.SortFunc(all, func(a, b long) int { return cmp.Or(b.words-a.words, strings.Compare(a.what, b.what)) })
	out := make([]string, len(all))
	for i, l := range all {
		out[i] = l.what
	}
	return out
}

// TestDocCommentLength fails on each doc comment over 100 words and each package doc of 300
// words or more in the module's non-test files, and logs the median and the counts (-v).
func TestDocCommentLength(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	fset, files := parseModule(t, root)
	if len(files) < 100 {
		t.Fatalf("%d files parsed under %s: not the module", len(files), root)
	}
	var all []int
	for _, f := range files {
		for _, d := range declDocs(fset, f) {
			all = append(all, d.words)
		}
	}
	pkgs := packageDocs(fset, files)
	t.Logf("doc comments: %s", summary(all, maxDoc))
	t.Logf("exported doc comments: %s", summary(exportedWords(fset, files), maxDoc))
	t.Logf("package docs: %s", summary(slices.Collect(maps.Values(pkgs)), maxPackageDoc))
	for _, v := range violations(fset, files, root) {
		t.Error(v)
	}
	if v := medianViolation(fset, files); v != "" {
		t.Error(v)
	}
}

// exportedWords lists the word counts of the exported declarations' doc comments.
func exportedWords(fset *token.FileSet, files []*ast.File) []int {
	var ws []int
	for _, f := range files {
		for _, d := range declDocs(fset, f) {
			if d.exported {
				ws = append(ws, d.words)
			}
		}
	}
	return ws
}

// medianViolation reports the exported doc comments' median when it is over maxMedian, else "".
func medianViolation(fset *token.FileSet, files []*ast.File) string {
	ws := exportedWords(fset, files)
	if len(ws) == 0 {
		return ""
	}
	slices.Sort(ws)
	if m := ws[len(ws)/2]; m > maxMedian {
		return fmt.Sprintf("exported doc comments: median %d words (limit %d): say what and which errors; the why goes to docs/", m, maxMedian)
	}
	return ""
}

// summary is the count, median, p90 and maximum of ws, and how many are over limit.
func summary(ws []int, limit int) string {
	if len(ws) == 0 {
		return "none"
	}
	slices.Sort(ws)
	within, _ := slices.BinarySearch(ws, limit+1)
	return fmt.Sprintf("%d, median %d words, p90 %d, max %d, %d over %d",
		len(ws), ws[len(ws)/2], ws[len(ws)*9/10], ws[len(ws)-1], len(ws)-within, limit)
}

// TestDocCommentLengthControl is the negative control: a 101-word doc comment, a 101-word
// field doc and a 300-word package doc are each reported, and comments at the limits are not.
func TestDocCommentLengthControl(t *testing.T) {
	t.Parallel()
	n := func(k int) string { return strings.TrimSpace(strings.Repeat("word ", k)) }
	src := fmt.Sprintf(`// %s
package p

// %s
func Long() {}

// %s
func atLimit() {}

type T struct {
	// %s
	Field int
}
`, n(maxPackageDoc+1), n(maxDoc+1), n(maxDoc), n(maxDoc+1))
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "/m/p/p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	got := violations(fset, []*ast.File{f}, "/m")
	want := []string{
		"p package p: package doc of 300 words (limit 299)",
		"p/p.go:11 T.Field: 101 words (limit 100)",
		"p/p.go:4 Long: 101 words (limit 100)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations = %q, want %q", got, want)
	}
}

// TestDocCommentMedianControl is the negative control of the median: exported doc comments
// of maxMedian+1 words are reported, and comments at maxMedian, or unexported, are not.
func TestDocCommentMedianControl(t *testing.T) {
	t.Parallel()
	n := func(k int) string { return strings.TrimSpace(strings.Repeat("word ", k)) }
	src := func(exported, words int) string {
		return fmt.Sprintf(`package p

// %[2]s
func %[1]s() {}

// %[2]s
func %[1]s2() {}

// short.
func %[1]s3() {}
`, map[bool]string{true: "F", false: "f"}[exported == 1], n(words))
	}
	for _, c := range []struct {
		exported, words int
		reported        bool
	}{{1, maxMedian + 1, true}, {1, maxMedian, false}, {0, maxMedian + 1, false}} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "/m/p/p.go", src(c.exported, c.words), parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if got := medianViolation(fset, []*ast.File{f}) != ""; got != c.reported {
			t.Errorf("exported %d, %d words: reported = %v, want %v", c.exported, c.words, got, c.reported)
		}
	}
}

// parseSource parses one file's source, with its comments.
func parseSource(t *testing.T, src string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "/m/p/p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

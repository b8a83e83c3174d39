package doccheck_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// maxSentences is the most sentences an exported function's or type's doc comment may have:
// what it does and which errors a caller handles, in one to three.
const maxSentences = 3

// sentences counts the sentences of text: each ends at a '.', '?' or '!' (closing quotes,
// brackets and backquotes after it included) followed by the end or by a space and a capital
// or a backquote; "e.g." and "i.e." end none.
func sentences(text string) int {
	s := strings.Join(strings.Fields(text), " ")
	n := 0
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(".?!", rune(s[i])) || strings.HasSuffix(s[:i+1], "e.g.") || strings.HasSuffix(s[:i+1], "i.e.") {
			continue
		}
		j := i + 1
		for j < len(s) && strings.ContainsRune("\"')]`", rune(s[j])) {
			j++
		}
		if j == len(s) || s[j] == ' ' && j+1 < len(s) && (unicode.IsUpper(rune(s[j+1])) || s[j+1] == '`') {
			n++
		}
	}
	return max(n, 1)
}

// longDocs lists the exported functions' and types' doc comments of more than maxSentences
// sentences in files, as "path:line name: n sentences".
func longDocs(fset *token.FileSet, files []*ast.File, root string) []string {
	var out []string
	check := func(g *ast.CommentGroup, name string) {
		if g == nil {
			return
		}
		if n := sentences(g.Text()); n > maxSentences {
			pos := fset.Position(g.Pos())
			rel, _ := filepath.Rel(root, pos.Filename)
			out = append(out, fmt.Sprintf("%s:%d %s: %d sentences", rel, pos.Line, name, n))
		}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && receiverExported(d) {
					check(d.Doc, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok && ts.Name.IsExported() {
						doc := ts.Doc
						if doc == nil && len(d.Specs) == 1 {
							doc = d.Doc
						}
						check(doc, ts.Name.Name)
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestDocCommentSentences fails on each exported function's or type's doc comment of more
// than maxSentences sentences in the module's non-test files.
func TestDocCommentSentences(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	fset, files := parseModule(t, root)
	for _, v := range longDocs(fset, files, root) {
		t.Error(v)
	}
}

// TestDocCommentSentencesControl is the negative control: four sentences are reported, three
// (with an "e.g." and a sentence ending in a backquote) are not, nor an unexported function's.
func TestDocCommentSentencesControl(t *testing.T) {
	t.Parallel()
	src := "package p\n\n" +
		"// Four does one thing. It returns two. Errors: `ErrX`. Nothing else.\nfunc Four() {}\n\n" +
		"// Three does e.g. this. It returns `x`. Errors: none.\nfunc Three() {}\n\n" +
		"// four does one thing. It returns two. Errors: none. Nothing else.\nfunc four() {}\n\n" +
		"// T is a type. It holds. It is safe. It is long.\ntype T int\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "/m/p/p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	got := longDocs(fset, []*ast.File{f}, "/m")
	want := []string{"p/p.go:12 T: 4 sentences", "p/p.go:3 Four: 4 sentences"}
	if !slices.Equal(got, want) {
		t.Errorf("longDocs = %q, want %q", got, want)
	}
}

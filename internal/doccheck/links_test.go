package doccheck_test

import (
	"go/ast"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docLink is a link from a comment to a page of docs/ or bench/, with its section if any.
var docLink = regexp.MustCompile(`\b((?:docs|bench)/[A-Za-z0-9_.-]+\.md)(?:#([a-z0-9_-]+))?`)

// anchors returns the anchors of a Markdown page: its explicit <a id="..."> and the slugs
// GitHub gives its headings (lower case, punctuation dropped, spaces as hyphens).
func anchors(page string) map[string]bool {
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`<a id="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		out[m[1]] = true
	}
	drop := regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
	for _, line := range strings.Split(page, "\n") {
		if h := strings.TrimLeft(line, "#"); h != line && strings.HasPrefix(h, " ") {
			out[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), ""), " ", "-")] = true
		}
	}
	return out
}

// brokenLinks lists the links of comments (doc comments and the others) to a page of docs/
// or bench/ under root that does not exist, or to a section it does not have.
func brokenLinks(t *testing.T, root string, files []*ast.File, read func(string) (string, error)) []string {
	t.Helper()
	pages := map[string]map[string]bool{} // page -> its anchors; nil: no such page
	var broken []string
	for _, f := range files {
		for _, g := range f.Comments {
			for _, m := range docLink.FindAllStringSubmatch(g.Text(), -1) {
				page, section := m[1], m[2]
				a, seen := pages[page]
				if !seen {
					if text, err := read(filepath.Join(root, page)); err == nil {
						a = anchors(text)
					}
					pages[page] = a
				}
				switch {
				case a == nil:
					broken = append(broken, m[0]+": no such page")
				case section != "" && !a[section]:
					broken = append(broken, m[0]+": no such section")
				}
			}
		}
	}
	slices.Sort(broken)
	return slices.Compact(broken)
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

// TestCommentLinks fails on a comment's link to a page of docs/ or bench/ that does not
// exist, or to a section the page does not have: the why a comment sends its reader to must
// be there.
func TestCommentLinks(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	_, files := parseModule(t, root)
	for _, b := range brokenLinks(t, root, files, readFile) {
		t.Error(b)
	}
}

// TestCommentLinksControl is the negative control: a missing page and a missing section are
// reported, a heading's slug and an explicit anchor are found.
func TestCommentLinksControl(t *testing.T) {
	t.Parallel()
	src := `package p

// See docs/a.md#the-watchdog, docs/a.md#kept, docs/a.md#gone and docs/none.md.
func F() {}
`
	pages := map[string]string{"/m/docs/a.md": "# A\n\n### The watchdog\n\n<a id=\"kept\"></a>\ntext\n"}
	read := func(path string) (string, error) {
		if p, ok := pages[path]; ok {
			return p, nil
		}
		return "", os.ErrNotExist
	}
	f := parseSource(t, src)
	got := brokenLinks(t, "/m", []*ast.File{f}, read)
	want := []string{"docs/a.md#gone: no such section", "docs/none.md: no such page"}
	if !slices.Equal(got, want) {
		t.Errorf("brokenLinks = %q, want %q", got, want)
	}
}

package apidoc

import (
	"html/template"
	"regexp"
	"strings"
)

// docText is a description rendered for the page: escaped, split into paragraphs at blank
// lines, with `code` spans set as code. The rest of CommonMark (links, emphasis, lists) is
// shown as the text it is written as: nothing in a description becomes markup of its own.
type docText template.HTML

var (
	codeSpan  = regexp.MustCompile("`([^`]+)`")
	blankLine = regexp.MustCompile(`\n\s*\n`)
)

// docOf renders s; "" renders as nothing.
func docOf(s string) docText {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	var b strings.Builder
	for _, para := range blankLine.Split(s, -1) {
		esc := template.HTMLEscapeString(strings.Join(strings.Fields(para), " "))
		// The backquote is not escaped, so the spans are found in the escaped text, and
		// their contents stay escaped.
		b.WriteString("<p>" + codeSpan.ReplaceAllString(esc, "<code>$1</code>") + "</p>")
	}
	return docText(b.String())
}

// HTML returns the rendered text for the template.
func (d docText) HTML() template.HTML { return template.HTML(d) } // escaped by docOf

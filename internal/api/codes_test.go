package api

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestREADMEErrorTable: the README's error table lists every code with its status, and no
// code the contract lacks.
func TestREADMEErrorTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| ([0-9]{3}) \\| (`[a-z_]+`(?: / `[a-z_]+`)*) \\|")
	code := regexp.MustCompile("`([a-z_]+)`")
	documented := map[string]int{}
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		status, _ := strconv.Atoi(m[1])
		for _, c := range code.FindAllStringSubmatch(m[2], -1) {
			documented[c[1]] = status
		}
	}
	for c, status := range statuses {
		if documented[c] != status {
			t.Errorf("README: %s is answered with %d, documented with %d", c, status, documented[c])
		}
	}
	for c := range documented {
		if Status(c) == 0 {
			t.Errorf("README documents %s, which the contract does not have", c)
		}
		// Every problem's type is README.md#error-<code>: the anchor must be there.
		if !strings.Contains(string(readme), `<a id="error-`+c+`"></a>`) {
			t.Errorf("README has no anchor error-%s for the problem type to point at", c)
		}
	}
}

// TestNewProblem: every code's problem has the code's status, a title, and a type that ends
// with the README's anchor for the code.
func TestNewProblem(t *testing.T) {
	for c, status := range statuses {
		p := NewProblem(c, "d")
		if p.Status != status || p.Title == "" || !strings.HasSuffix(p.Type, "#error-"+c) || p.Code != c || p.Detail != "d" {
			t.Errorf("NewProblem(%s) = %+v", c, p)
		}
	}
	if got, want := NewProblem(CodeClientClosedRequest, "").Title, "Client Closed Request"; got != want {
		t.Errorf("499 title = %q, want %q", got, want)
	}
}

// Package doccheck holds the tests that keep doc comments short and their links true: no doc
// comment over 100 words, no package doc of 300 words or more, exported doc comments at a
// median of 13 words at most, and no comment linking a page of docs/ or bench/, or a section
// of one, that is not there. The reasons behind a design go to docs/, and a comment links
// them. It has no code: run `go test -v ./internal/doccheck` for the counts.
package doccheck

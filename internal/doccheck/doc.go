// Package doccheck holds the test that keeps doc comments short: none over 100 words, and
// no package doc of 300 words or more. The reasons behind a design go to docs/, and a comment
// links them. It has no code: run `go test -v ./internal/doccheck` for the counts.
package doccheck

// Package boundarycheck holds the tests of the project's dependency boundaries: for each
// binary (cmd/api, its lab build, cmd/loadtest) and for the contract and the domain packages,
// the packages it links, as `go list -deps` lists them, must not include what the boundary
// keeps out. Each guard has a negative control: the same check, run on a dependency graph
// that breaks it, must fail (docs/testing.md, "Boundaries"). Within cmd/api's packages, only
// the files it allows import database/sql (docs/architecture.md#reaching-postgresql).
//
// The package has no code of its own outside its tests, and no binary imports it.
package boundarycheck

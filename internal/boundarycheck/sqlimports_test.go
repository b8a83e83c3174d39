package boundarycheck_test

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sqlAllowed are the only files of the packages cmd/api links (either build) that may import
// database/sql: the service reaches PostgreSQL through gorm, and through pgx on the one seam
// (docs/architecture.md#reaching-postgresql). Each entry says why it needs the package.
var sqlAllowed = map[string]string{
	"db/db.go":                      "goose, the migration tool, takes a *sql.DB",
	"db/pgxconn.go":                 "the seam: a *sql.Conn held from gorm's pool, unwrapped to pgx",
	"internal/order/service.go":     "gorm's Begin takes *sql.TxOptions (the repeatable-read read-only transaction)",
	"internal/order/tx.go":          "gorm's Commit reports a transaction database/sql already ended as sql.ErrTxDone",
	"internal/order/unavailable.go": "gorm passes up a connection the pool found broken as driver.ErrBadConn: an outage",
	"internal/lab/lab.go":           "lab build only: the teaching postgres lock takes the pool (gorm's, from labapi)",
	"internal/lab/postgres.go":      "lab build only: the teaching postgres lock holds a session per holder and discards it",
}

// TestDatabaseSQLOnlyWhereAllowed: no non-test file of the packages cmd/api links, in the
// production and the lab build, imports database/sql (or a package under it) unless
// sqlAllowed names it; and each file sqlAllowed names still does, so the list stays short.
func TestDatabaseSQLOnlyWhereAllowed(t *testing.T) {
	t.Parallel()
	root, files := apiFiles(t)
	importers := sqlImporters(t, root, files)
	for _, v := range sqlViolations(importers) {
		t.Error(v)
	}
}

// TestDatabaseSQLGuardCanFail is the guard's negative control: a file of cmd/api's packages
// that imports database/sql, not on the list, must be reported, and so must an entry of the
// list whose file no longer imports it.
func TestDatabaseSQLGuardCanFail(t *testing.T) {
	t.Parallel()
	root, files := apiFiles(t)
	bad := filepath.Join(root, "internal", "metrics", "zz_guard_control.go")
	src := "package metrics\n\nimport \"database/sql\"\n\nvar _ *sql.DB\n"
	dir := t.TempDir()
	tmp := filepath.Join(dir, "control.go")
	if err := os.WriteFile(tmp, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	importers := sqlImporters(t, root, files)
	// The control file is read from the temporary directory, under the name of a file of
	// internal/metrics: the worktree is left untouched.
	importers[rel(t, root, bad)] = parseImportsSQL(t, tmp)
	if v := sqlViolations(importers); !reports(v, "internal/metrics/zz_guard_control.go") {
		t.Errorf("an import of database/sql in internal/metrics was not reported: %q", v)
	}
	importers["db/db.go"] = false
	if v := sqlViolations(importers); !reports(v, "db/db.go") {
		t.Errorf("an allowed file that no longer imports database/sql was not reported: %q", v)
	}
}

// reports says whether one of violations is about file.
func reports(violations []string, file string) bool {
	return slices.ContainsFunc(violations, func(v string) bool { return strings.HasPrefix(v, file+" ") })
}

// sqlViolations returns, for importers (each file, relative to the module root, and whether
// it imports database/sql), the files that import it without being allowed and the allowed
// files that do not import it.
func sqlViolations(importers map[string]bool) []string {
	var out []string
	for f, imports := range importers {
		if _, ok := sqlAllowed[f]; imports && !ok {
			out = append(out, f+" imports database/sql: reach PostgreSQL through gorm, or pgx through db.Conn")
		}
	}
	for f, why := range sqlAllowed {
		if !importers[f] {
			out = append(out, f+" is allowed database/sql ("+why+") but does not import it: take it off the list")
		}
	}
	slices.Sort(out)
	return out
}

// apiFiles returns the module's root and its non-test Go files that cmd/api links, in the
// production build and in the lab build (absolute paths).
func apiFiles(t *testing.T) (root string, files []string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tags := range []string{"", "lab"} {
		args := []string{"list", "-deps", "-f", `{{if .Module}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}`}
		if tags != "" {
			args = append(args, "-tags", tags)
		}
		cmd := exec.Command("go", append(args, mod+"cmd/api")...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps (tags %q): %v", tags, err)
		}
		for _, f := range strings.Fields(string(out)) {
			if strings.HasPrefix(f, root+string(filepath.Separator)) && !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
	}
	if len(files) < 50 {
		t.Fatalf("cmd/api links %d files of the module: the listing is wrong", len(files))
	}
	return root, files
}

// sqlImporters reports, for each of files, whether it imports database/sql or a package
// under it, by its path relative to root.
func sqlImporters(t *testing.T, root string, files []string) map[string]bool {
	t.Helper()
	out := make(map[string]bool, len(files))
	for _, f := range files {
		out[rel(t, root, f)] = parseImportsSQL(t, f)
	}
	return out
}

func parseImportsSQL(t *testing.T, file string) bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p == "database/sql" || strings.HasPrefix(p, "database/sql/") {
			return true
		}
	}
	return false
}

func rel(t *testing.T, root, file string) string {
	t.Helper()
	r, err := filepath.Rel(root, file)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(r)
}

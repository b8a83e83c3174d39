package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/labrun"
	"github.com/seckill/seckill/internal/loadgen"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// learnSteps is how many steps the learning path has.
const learnSteps = 7

// TestLearnPathCommands checks docs/learn.md against the real command line (checkLearn):
// seven steps, each with its one lab command directly under its heading, accepted by `loadtest
// lab`'s flags, selecting exactly the cells the step names, each with the verdict the lab
// expects of it; the page's other commands are Makefile targets. Each cell it names that is in
// the short matrix is run by TestLabShortMatrix (`make test`), which fails unless the cell
// comes out as expected, that is as the page says; TestLearnPathCellsRun runs the others.
func TestLearnPathCommands(t *testing.T) {
	doc, makefile, err := readLearn()
	if err != nil {
		t.Fatal(err)
	}
	steps, err := checkLearn(doc, makefile, learnSteps)
	if err != nil {
		t.Fatal(err)
	}
	short := labrun.ShortCells()
	for _, st := range steps {
		for _, c := range st.Claims {
			by := "TestLearnPathCellsRun"
			if slices.Contains(short, c.Cell) {
				by = "TestLabShortMatrix"
			}
			t.Logf("step %d, %s × %s: %s (run by %s)", st.N, c.Cell.Lock, c.Cell.Scenario, c.Verdict, by)
		}
	}
}

// TestLearnPathCheckRefuses is the check's negative control: a page with a lock or scenario
// the lab does not have, a flag lab does not take, a verdict the lab does not expect, a cell
// the command runs but the page does not claim (or claims but does not run), a step without
// its command, or a make target that does not exist, fails it.
func TestLearnPathCheckRefuses(t *testing.T) {
	doc, makefile, err := readLearn()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"unknown lock", "-locks none ", "-locks nolock ", `no "nolock"`},
		{"unknown scenario", "-locks mutex -scenarios crowd", "-locks mutex -scenarios mob", `no "mob"`},
		{"unknown flag", "-locks del -scenarios long-work", "-locks del -scenario long-work", "flag provided but not defined"},
		{"wrong verdict", "# none × crowd: oversold", "# none × crowd: safe", "the page says safe, the lab expects oversold"},
		{"a claimed cell it never names", "# setnx × crash: stalled", "# setnx × crash: stalled\n# setnx × crowd: safe", "the page claims"},
		{"a cell run but not claimed", "# watchdog × pause: oversold\n", "", "the page claims"},
		{"no command under a step", "## 4. `SETNX` then `EXPIRE`\n\n```sh", "## 4. `SETNX` then `EXPIRE`\n\nText first.\n\n```sh", "step 4: no ```sh block"},
		{"not the lab", "go run ./cmd/loadtest lab -locks mutex", "go run ./cmd/loadtest compare -locks mutex", "want go run ./cmd/loadtest lab"},
		{"no such make target", "make demo\n", "make demos\n", `"make demos"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(doc, tc.old, tc.new, 1)
			if bad == doc {
				t.Fatalf("the page has no %q to change", tc.old)
			}
			_, err := checkLearn(bad, makefile, learnSteps)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("checkLearn = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestLearnPathCellsRun runs, through loadtest lab's own machinery (loadgen.RunLab, three real
// API processes, the scenarios' real faults), the cells the learning path names that the short
// matrix does not run (TestLabShortMatrix runs those), and fails unless each comes out as the
// page says. A partition cell needs root, ip and nft, and is left out without them, as
// TestPartitionCells is skipped.
func TestLearnPathCellsRun(t *testing.T) {
	dsn, redisAddr, prefix := testenv.APIBackend(t)
	doc, makefile, err := readLearn()
	if err != nil {
		t.Fatal(err)
	}
	steps, err := checkLearn(doc, makefile, learnSteps)
	if err != nil {
		t.Fatal(err)
	}
	claimed := map[labrun.Pair]string{}
	for _, st := range steps {
		for _, c := range st.Claims {
			claimed[c.Cell] = c.Verdict
		}
	}
	var cells []labrun.Pair
	for _, p := range learnCells(steps) {
		if slices.Contains(labrun.ShortCells(), p) {
			continue
		}
		if err := labrun.PartitionSupported(); p.Scenario == "partition" && err != nil {
			t.Logf("%s × partition left out: %v", p.Lock, err)
			continue
		}
		cells = append(cells, p)
	}
	if len(cells) == 0 {
		t.Skip("every cell of the learning path is in the short matrix")
	}
	jsonPath := filepath.Join(t.TempDir(), "lab.json")
	job, err := labConfig([]string{"-quiet", "-json", jsonPath, "-history-dir", t.TempDir(),
		"-database-url", dsn, "-redis-addr", redisAddr, "-redis-prefix", prefix},
		func(string) string { return "" }, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	job.Cells, job.APIBin = cells, servers.BuildAPI(t)
	// Each cell takes at most 10 s (25 s for a failover), and the build and start of the
	// processes a minute at most under -race on a busy machine.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute+time.Duration(len(cells))*30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err = loadgen.RunLab(ctx, job, nil, &stdout, &stderr)
	t.Logf("the learning path's cells outside the short matrix:\n%s%s", stdout.String(), stderr.String())
	if err != nil {
		t.Fatalf("loadtest lab: %v", err)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var res labrun.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != len(cells) {
		t.Fatalf("%d cells, want %d", len(res.Cells), len(cells))
	}
	for _, c := range res.Cells {
		p := labrun.Pair{Lock: c.Lock, Scenario: c.Scenario}
		if !c.OK() || c.Verdict != claimed[p] {
			t.Errorf("%s × %s: %s, docs/learn.md says %s", c.Lock, c.Scenario, c, claimed[p])
		}
	}
}

package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/seckill/seckill/internal/labrun"
)

// The learning path, docs/learn.md, is checked against the real command line: each of its
// numbered steps ("## N. title") has, directly under its heading, a ```sh block whose first
// line is one `go run ./cmd/loadtest lab` command, followed by one claim per cell that command
// runs, `# lock × scenario: verdict`. Every other ```sh block of the page is `make <target>`.

// learnStep is one numbered step of the learning path.
type learnStep struct {
	N       int
	Title   string
	Command string
	// Claims are the cells the step says its command runs, with the verdict it says each
	// comes out with, in the page's order.
	Claims []learnClaim
}

// learnClaim is a cell the page names, and its claimed verdict.
type learnClaim struct {
	Cell    labrun.Pair
	Verdict string
}

var (
	stepHeading = regexp.MustCompile(`^## (\d+)\. (.+)$`)
	claimLine   = regexp.MustCompile(`^# (\S+) × (\S+): (\S+)$`)
	makeLine    = regexp.MustCompile(`^make ([a-z][a-z0-9-]*)$`)
	makeTarget  = regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):.*##`)
)

// labCommand is how a step's command starts: the lab, from the repository's root.
const labCommand = "go run ./cmd/loadtest lab"

// checkLearn parses the learning path and checks it: steps numbered 1 to steps in order, each
// with its command block directly under its heading; each command accepted by lab's command
// line (labConfig: its flags exist, its lock and scenario names are the lab's); the cells it
// selects exactly the cells it claims; each claimed verdict the one written down for the cell
// (labrun.Expected); every other sh block a target of makefile.
func checkLearn(doc, makefile string, steps int) ([]learnStep, error) {
	targets := map[string]bool{}
	for _, m := range makeTarget.FindAllStringSubmatch(makefile, -1) {
		targets[m[1]] = true
	}
	var out []learnStep
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		if lines[i] == "```sh" { // a block that is not a step's: make targets only
			for i++; i < len(lines) && lines[i] != "```"; i++ {
				if m := makeLine.FindStringSubmatch(lines[i]); m == nil || !targets[m[1]] {
					bad("line %d: %q: want a step's command directly under its heading, or make and a target of the Makefile", i+1, lines[i])
				}
			}
			continue
		}
		m := stepHeading.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		st := learnStep{Title: m[2]}
		fmt.Sscan(m[1], &st.N)
		if st.N != len(out)+1 {
			bad("step %q is numbered %d, want %d", st.Title, st.N, len(out)+1)
		}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j+1 >= len(lines) || lines[j] != "```sh" {
			bad("step %d: no ```sh block directly under its heading", st.N)
			out = append(out, st)
			continue
		}
		st.Command = lines[j+1]
		for i = j + 2; i < len(lines) && lines[i] != "```"; i++ {
			c := claimLine.FindStringSubmatch(lines[i])
			if c == nil {
				bad("step %d: %q: want a claim `# lock × scenario: verdict`", st.N, lines[i])
				continue
			}
			st.Claims = append(st.Claims, learnClaim{labrun.Pair{Lock: c[1], Scenario: c[2]}, c[3]})
		}
		if err := checkStep(st); err != nil {
			bad("step %d: %v", st.N, err)
		}
		out = append(out, st)
	}
	if len(out) != steps {
		bad("%d steps, want %d", len(out), steps)
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("docs/learn.md:\n%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

// checkStep checks a step's command against lab's command line and its claims against the
// cells it selects and the verdicts written down for them.
func checkStep(st learnStep) error {
	args, ok := strings.CutPrefix(st.Command, labCommand+" ")
	if !ok {
		return fmt.Errorf("%q: want %s and its flags", st.Command, labCommand)
	}
	job, err := labConfig(strings.Fields(args), func(string) string { return "" }, io.Discard)
	if err != nil {
		return fmt.Errorf("%q: the command line refuses it: %w", st.Command, err)
	}
	var claimed []labrun.Pair
	for _, c := range st.Claims {
		claimed = append(claimed, c.Cell)
		want, ok := labrun.Expected[c.Cell.Lock][c.Cell.Scenario]
		switch {
		case !ok:
			return fmt.Errorf("%s × %s: no such cell", c.Cell.Lock, c.Cell.Scenario)
		case c.Verdict != want:
			return fmt.Errorf("%s × %s: the page says %s, the lab expects %s", c.Cell.Lock, c.Cell.Scenario, c.Verdict, want)
		}
	}
	sortPairs := func(ps []labrun.Pair) []labrun.Pair {
		ps = slices.Clone(ps)
		slices.SortFunc(ps, func(a, b labrun.Pair) int { return strings.Compare(a.Lock+" "+a.Scenario, b.Lock+" "+b.Scenario) })
		return ps
	}
	if got, want := sortPairs(job.Cells), sortPairs(claimed); !slices.Equal(got, want) {
		return fmt.Errorf("%q runs %v, the page claims %v", st.Command, got, want)
	}
	return nil
}

// learnCells returns the cells the steps claim, each once, in the page's order.
func learnCells(steps []learnStep) []labrun.Pair {
	var out []labrun.Pair
	for _, st := range steps {
		for _, c := range st.Claims {
			if !slices.Contains(out, c.Cell) {
				out = append(out, c.Cell)
			}
		}
	}
	return out
}

// readLearn returns the learning path and the Makefile, from the repository's root.
func readLearn() (doc, makefile string, err error) {
	d, err := os.ReadFile("../../docs/learn.md")
	if err != nil {
		return "", "", err
	}
	m, err := os.ReadFile("../../Makefile")
	return string(d), string(m), err
}

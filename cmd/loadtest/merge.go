package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/seckill/seckill/internal/loadgen"
)

const mergeHelp = `Combine the JSON reports (-json) of runs made at the same time from several load machines into
one: counts summed, latencies recomputed from the merged HDR histograms, orders/s and answers/s
over the joined windows (docs/loadtest.md, "Merging runs"). Prints the merged report; -o writes
it as JSON, -hist the corrected latency distribution of its first run. Exit 3 when an input's
verdict failed.`

// cmdMerge merges JSON reports.
func cmdMerge(_ context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("merge", "[flags] REPORT.json...", mergeHelp, stderr)
	out := fs.String("o", "", "write the merged report as JSON to this file")
	hist := fs.String("hist", "", "write the merged corrected latency distribution (.hgrm, ms) of the first run to this file")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	paths := fs.Args()
	if len(paths) == 0 {
		return loadgen.UsageError{Err: errors.New("want at least one JSON report")}
	}
	reps := make([]loadgen.Report, len(paths))
	for i, p := range paths {
		var err error
		if reps[i], err = loadgen.ReadReport(p); err != nil {
			return err
		}
	}
	rep, err := loadgen.Merge(reps, paths)
	if err != nil {
		return err
	}
	loadgen.PrintMerged(stdout, rep)
	if err := loadgen.WriteMerged(rep, *out, *hist); err != nil {
		return err
	}
	if !rep.OK {
		return fmt.Errorf("%w: an input's verdict failed", loadgen.ErrAuditFailed)
	}
	return nil
}

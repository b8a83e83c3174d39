package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/seckill/seckill/internal/benchrec"
	"github.com/seckill/seckill/internal/loadgen"
)

const recordHelp = `Write the markdown of a benchmark record, from the JSON reports (-json) of the runs it holds,
to -o (default stdout). The machine, versions, commit and CPU steal come from the reports.

  -format bench  one compare report: the machine, the versions, the command and the table
                 (make bench: bench/<UTC date>-<host>.md)
  -format hot    compare and baseline reports of one hot dlock product, one row each, in
                 the order given, and the rows of reports with -etcd-targets in a table of
                 their own, etcd beside Redis (make bench-hot: bench/hot-<UTC date>-<host>.md)`

// stampLayout formats the UTC time of a record in its name and title.
const stampLayout = "2006-01-02T150405Z"

// cmdRecord writes a bench record's markdown from JSON reports.
func cmdRecord(_ context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("record", "[flags] REPORT.json...", recordHelp, stderr)
	format := fs.String("format", "bench", "bench or hot")
	out := fs.String("o", "", "write the record to this file instead of stdout")
	stamp := fs.String("stamp", "", "UTC time in the title, as in the record's file name; default: when the first report started")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	paths := fs.Args()
	switch {
	case *format != "bench" && *format != "hot":
		return loadgen.UsageError{Err: fmt.Errorf("-format %q: want bench or hot", *format)}
	case len(paths) == 0:
		return loadgen.UsageError{Err: fmt.Errorf("no report: name the JSON reports to record")}
	case *format == "bench" && len(paths) != 1:
		return loadgen.UsageError{Err: fmt.Errorf("-format bench records one compare report, not %d", len(paths))}
	}
	reps := make([]loadgen.Report, len(paths))
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("record: %w", err)
		}
		if err := json.Unmarshal(b, &reps[i]); err != nil {
			return fmt.Errorf("record: %s: %w", p, err)
		}
	}
	if *stamp == "" {
		*stamp = reps[0].Started.UTC().Format(stampLayout)
	}
	var md bytes.Buffer
	if *format == "bench" {
		link := filepath.Base(paths[0])
		if *out != "" {
			if rel, err := filepath.Rel(filepath.Dir(*out), paths[0]); err == nil {
				link = filepath.ToSlash(rel)
			}
		}
		benchrec.WriteBench(&md, reps[0], *stamp, link)
	} else {
		benchrec.WriteHot(&md, reps, *stamp)
	}
	if *out == "" {
		_, err := stdout.Write(md.Bytes())
		return err
	}
	if err := os.WriteFile(*out, md.Bytes(), 0o644); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

package main

import (
	"context"
	"io"

	"github.com/seckill/seckill/internal/loadgen"
)

const baselineHelp = `Measure sold-out rejection throughput on the API (a stock-0 product) beside the ceiling: bare
gin handlers that only answer 409 sold_out (loadtest ceiling, one process per target), attacked
the same way.`

// cmdBaseline measures sold-out rejection on the API and on the ceiling.
func cmdBaseline(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg attackConfig
	fs := cfg.attackFlags("baseline", baselineHelp, getenv, stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg.Baseline = true
	if err := cfg.finish(fs); err != nil {
		return err
	}
	return loadgen.Execute(ctx, cfg.Config, nil, stdout, stderr)
}

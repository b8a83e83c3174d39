package main

import (
	"context"
	"io"
	"strings"

	"github.com/seckill/seckill/internal/loadgen"
)

const runHelp = `Create one product (-stock, -strategy, -think-ms) through the admin API, attack its purchase
route on every -targets URL, audit it, and report. Fails (exit 3) when a safe strategy oversold,
sold a user twice, or left the audit inconsistent.`

// cmdRun attacks one product of one strategy.
func cmdRun(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg attackConfig
	fs := cfg.attackFlags("run", runHelp, getenv, stderr)
	strategy := fs.String("strategy", "dlock", "purchase strategy of the product: "+strings.Join(loadgen.Strategies, ", "))
	fs.BoolVar(&cfg.ExpectNaive, "expect-naive-oversell", false,
		"fail when the naive strategy does not oversell (needs -think-ms > 0 and concurrency)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg.Strategies, cfg.StrategyFlag = []string{*strategy}, "-strategy"
	if err := cfg.finish(fs); err != nil {
		return err
	}
	return loadgen.Execute(ctx, cfg.Config, nil, stdout, stderr)
}

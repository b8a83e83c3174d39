package main

import (
	"context"
	"flag"
	"io"
	"strings"

	"github.com/seckill/seckill/internal/loadgen"
)

const compareHelp = `Run the same scenario against each of -strategies in turn (each on a fresh product), then
print one table. With -baseline, also measure sold-out rejection on a stock-0 product and on
the bare gin ceiling. With -runs N, repeat everything N times and report medians.

With -etcd-targets, dlock runs on both lock backends in every round: "dlock (redis)" on
-targets, then "dlock (etcd)" on the -etcd-targets (API processes started with
LOCK_BACKEND=etcd, which their /readyz must show), judged alike; the report adds etcd's
orders/s and p99 over Redis's. -zookeeper-targets (APIs with LOCK_BACKEND=zookeeper) adds
"dlock (zookeeper)" after them, alike.`

// cmdCompare attacks a product of each strategy in turn and prints one table.
func cmdCompare(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := compareConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	return loadgen.Execute(ctx, cfg.Config, nil, stdout, stderr)
}

// compareConfig reads compare's command line.
func compareConfig(args []string, getenv func(string) string, stderr io.Writer) (attackConfig, error) {
	var cfg attackConfig
	fs, list := compareFlags(&cfg, getenv, stderr)
	if err := parseFlags(fs, args); err != nil {
		return cfg, err
	}
	cfg.Strategies, cfg.StrategyFlag = loadgen.SplitList(*list), "-strategies"
	return cfg, cfg.finish(fs)
}

// compareFlags returns compare's flag set, bound to cfg but for the list of strategies
// (loadtest ui starts its runs from its defaults).
func compareFlags(cfg *attackConfig, getenv func(string) string, stderr io.Writer) (fs *flag.FlagSet, strategies *string) {
	fs = cfg.attackFlags("compare", compareHelp, getenv, stderr)
	strategies = fs.String("strategies", strings.Join(loadgen.Strategies, ","), "strategies to compare, in order")
	fs.StringVar(&cfg.etcdTargetList, "etcd-targets", "",
		"comma-separated base URLs of APIs whose dlock locks are in etcd (LOCK_BACKEND=etcd): dlock then runs on both backends")
	fs.StringVar(&cfg.zkTargetList, "zookeeper-targets", "",
		"comma-separated base URLs of APIs whose dlock locks are in ZooKeeper (LOCK_BACKEND=zookeeper): dlock then runs on that backend too")
	fs.BoolVar(&cfg.Baseline, "baseline", true, "also measure sold-out rejection on a stock-0 product and the bare gin ceiling")
	fs.BoolVar(&cfg.ExpectNaive, "expect-naive-oversell", true,
		"fail when the naive strategy does not oversell (needs -think-ms > 0 and concurrency)")
	return fs, strategies
}

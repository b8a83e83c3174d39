#!/usr/bin/env bash
# bench.sh [loadtest compare flags...]: the longer benchmark. Starts PostgreSQL and Redis (make
# up) and three API processes like the demo, runs `loadtest compare` BENCH_RUNS times (medians
# in the table), and records the machine, the versions, every parameter and the results in
#   bench/<UTC date>-<host>.json   everything loadtest measured (-json), with the metadata
#   bench/<UTC date>-<host>.md     the machine, versions, scenario and the table (loadtest record)
#
# The scenario defaults to think_ms 0, where a design that holds the lock for one order at a
# time tops out near 1,500 orders/s; override with the variables below or with extra flags.
set -euo pipefail
# shellcheck source=scripts/demo.sh
source "$(dirname "${BASH_SOURCE[0]}")/demo.sh" # cds to the repository; start_apis, stop_apis, build

BENCH_RUNS=${BENCH_RUNS:-3}
BENCH_STOCK=${BENCH_STOCK:-2000}
BENCH_THINK_MS=${BENCH_THINK_MS:-0}
BENCH_WORKERS=${BENCH_WORKERS:-64}
BENCH_DURATION=${BENCH_DURATION:-20s}
BENCH_AFTER_SOLDOUT=${BENCH_AFTER_SOLDOUT:-3s}
BENCH_REPEAT_SHARE=${BENCH_REPEAT_SHARE:-0.1}

bench_main() {
	scripts/infra.sh up
	build
	start_apis
	mkdir -p bench
	local stamp host base status=0
	stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
	host=$(hostname -s 2>/dev/null || hostname)
	base=bench/$stamp-$host
	local args=(
		-targets "$TARGETS" -runs "$BENCH_RUNS"
		-stock "$BENCH_STOCK" -think-ms "$BENCH_THINK_MS" -workers "$BENCH_WORKERS"
		-repeat-share "$BENCH_REPEAT_SHARE" -duration "$BENCH_DURATION" -requests 2000000
		-after-soldout "$BENCH_AFTER_SOLDOUT" -timeout 10s -expect-naive-oversell=false
	)
	say "benchmark: ${args[*]} $*"
	# The report carries the machine, the versions, the commit and the CPU steal; -meta adds
	# what loadtest cannot know.
	bin/loadtest compare "${args[@]}" "$@" -json "$base.json" -meta "db_max_conns=${DB_MAX_CONNS:-20}" || status=$?
	[ -s "$base.json" ] || return $status
	bin/loadtest record -format bench -stamp "$stamp" -o "$base.md" "$base.json"
	say "recorded $base.json and $base.md"
	return $status
}

bench_main "$@"

#!/usr/bin/env bash
# bench.sh [loadtest compare flags...]: the longer benchmark. Starts PostgreSQL and Redis (make
# up) and three API processes like the demo, runs `loadtest compare` BENCH_RUNS times (medians
# in the table), and records the machine, the versions, every parameter and the results in
#   bench/<UTC date>-<host>.json   everything loadtest measured (-json), with the metadata
#   bench/<UTC date>-<host>.md     the machine, versions, scenario and the table
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

redis_version() {
	local host=${REDIS_ADDR%:*} port=${REDIS_ADDR##*:} v=
	if command -v redis-cli >/dev/null; then
		v=$(redis-cli -h "$host" -p "$port" INFO server 2>/dev/null | tr -d '\r' | sed -n 's/^redis_version://p')
	fi
	if [ -z "$v" ] && command -v redis-server >/dev/null; then
		v="$(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') (redis-server binary)"
	fi
	echo "${v:-unknown}"
}

postgres_version() {
	local v=
	command -v psql >/dev/null && v=$(psql "$DATABASE_URL" -tAc 'SHOW server_version' 2>/dev/null) || true
	echo "${v:-unknown}"
}

bench_main() {
	scripts/infra.sh up
	build
	start_apis
	mkdir -p bench
	local stamp host base cpu cores mem kernel gov pgv redisv commit status=0
	stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
	host=$(hostname -s 2>/dev/null || hostname)
	base=bench/$stamp-$host
	cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
	cores=$(nproc)
	mem=$(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)
	kernel=$(uname -sr)
	gov=$("$GO" env GOVERSION)
	pgv=$(postgres_version)
	redisv=$(redis_version)
	commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
	git diff --quiet HEAD 2>/dev/null || commit+=" (uncommitted changes)"
	local args=(
		-targets "$TARGETS" -runs "$BENCH_RUNS"
		-stock "$BENCH_STOCK" -think-ms "$BENCH_THINK_MS" -workers "$BENCH_WORKERS"
		-repeat-share "$BENCH_REPEAT_SHARE" -duration "$BENCH_DURATION" -requests 2000000
		-after-soldout "$BENCH_AFTER_SOLDOUT" -timeout 10s -expect-naive-oversell=false
	)
	say "benchmark: ${args[*]} $*"
	bin/loadtest compare "${args[@]}" "$@" -json "$base.json" \
		-meta "host=$host" -meta "cpu_model=$cpu" -meta "cores=$cores" -meta "memory=$mem" -meta "kernel=$kernel" \
		-meta "go=$gov" -meta "postgresql=$pgv" -meta "redis=$redisv" -meta "commit=$commit" \
		-meta "api_processes=$(wc -w <<<"$API_PORTS")" -meta "db_max_conns=${DB_MAX_CONNS:-20}" \
		| tee "$RUN_DIR/bench-table.txt" || status=${PIPESTATUS[0]}
	{
		echo "# Benchmark $stamp on $host"
		echo
		echo "| | |"
		echo "|---|---|"
		echo "| CPU | $cpu, $cores cores (shared with PostgreSQL, Redis, the APIs and the load generator) |"
		echo "| Memory | $mem |"
		echo "| Kernel | $kernel |"
		echo "| Go | $gov |"
		echo "| PostgreSQL | $pgv |"
		echo "| Redis | $redisv |"
		echo "| Commit | $commit |"
		echo "| API processes | $(wc -w <<<"$API_PORTS") (DB_MAX_CONNS ${DB_MAX_CONNS:-20} each) |"
		echo
		echo "Command: \`bin/loadtest compare ${args[*]}${*:+ $*}\`"
		echo
		echo '```text'
		cat "$RUN_DIR/bench-table.txt"
		echo '```'
		echo
		echo "Every run, with per-outcome latencies and the three audits: [$stamp-$host.json]($stamp-$host.json)."
	} >"$base.md"
	say "recorded $base.json and $base.md"
	return $status
}

bench_main "$@"

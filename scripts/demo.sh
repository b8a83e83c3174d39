#!/usr/bin/env bash
# demo.sh [loadtest compare flags...]: the flash sale end to end, in about a minute.
#
#   1. make up: PostgreSQL and Redis on loopback (reused when they already answer);
#   2. build bin/api and bin/loadtest;
#   3. start three API processes on 127.0.0.1:8081-8083 (logs in .run/api-PORT.log);
#   4. loadtest compare: every strategy on a fresh product, each audited through the API and
#      directly in PostgreSQL and Redis, then the sold-out rejection baselines; print the table;
#   5. stop the APIs (also on Ctrl-C or failure).
#
# Extra arguments go to `loadtest compare` and override the scenario below. The exit status is
# loadtest's: 3 when a safe strategy oversold (or naive did not), 1 when something could not run.
# scripts/bench.sh sources this file for start_apis and stop_apis.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
API_PORTS=${API_PORTS:-"8081 8082 8083"}
export DATABASE_URL=${DATABASE_URL:-postgres://seckill:seckill@127.0.0.1:5432/seckill?sslmode=disable}
export REDIS_ADDR=${REDIS_ADDR:-127.0.0.1:6379}
# The demo's own key namespace and admin token: it never touches another deployment's keys.
export REDIS_KEY_PREFIX=${REDIS_KEY_PREFIX:-seckill-demo}
export ADMIN_TOKEN=${ADMIN_TOKEN:-demo-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')}
RUN_DIR=$PWD/.run
API_PIDS=()

# shellcheck source=scripts/lib.sh
source scripts/lib.sh

# build: bin/api and bin/loadtest as `make build` makes them, stamped with this checkout's
# revision, which the reports and bench records carry.
build() {
	say "building bin/api and bin/loadtest"
	make --no-print-directory -s build GO="$GO"
}

# start_apis: one API process per port in API_PORTS; sets TARGETS to their base URLs.
start_apis() {
	mkdir -p "$RUN_DIR"
	TARGETS=
	local port
	for port in $API_PORTS; do
		port_taken "$port" && die "port $port is taken; free it or set API_PORTS (e.g. API_PORTS='9081 9082 9083')"
	done
	trap stop_apis EXIT
	trap 'exit 130' INT TERM
	for port in $API_PORTS; do
		HTTP_ADDR=127.0.0.1:$port LOG_LEVEL=${LOG_LEVEL:-warn} bin/api >"$RUN_DIR/api-$port.log" 2>&1 &
		API_PIDS+=("$!")
		TARGETS+=${TARGETS:+,}http://127.0.0.1:$port
	done
	say "started ${#API_PIDS[@]} API processes: $TARGETS (logs: .run/api-PORT.log)"
}

# stop_apis: SIGTERM to the processes start_apis started (they drain), then wait for them.
stop_apis() {
	[ ${#API_PIDS[@]} -gt 0 ] || return 0
	say "stopping the API processes"
	local pid
	for pid in "${API_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${API_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
	API_PIDS=()
}

main() {
	scripts/infra.sh up
	build
	start_apis
	# About a minute: 5 strategies and 2 baselines, each sells out in a few seconds (think_ms 5
	# keeps the one-at-a-time strategies near 150 orders/s and makes naive oversell), then
	# measures sold-out rejection for 2 s; naive never sells out and stops at 8 s.
	local status=0
	bin/loadtest compare -targets "$TARGETS" \
		-stock 200 -think-ms 5 -workers 64 -repeat-share 0.1 \
		-duration 8s -requests 200000 -after-soldout 2s -timeout 10s \
		-json "$RUN_DIR/demo.json" -plot "$RUN_DIR/demo.html" "$@" || status=$?
	if [ $status = 1 ]; then
		local port
		for port in $API_PORTS; do say "last lines of .run/api-$port.log:"; tail -n 5 "$RUN_DIR/api-$port.log" >&2 || true; done
	else
		say "full report: .run/demo.json; latency plot by outcome: .run/demo.html"
	fi
	return $status
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi

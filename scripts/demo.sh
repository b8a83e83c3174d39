#!/usr/bin/env bash
# demo.sh [loadtest compare flags...]: the flash sale end to end, in about a minute.
#
#   1. make up: PostgreSQL, Redis and etcd on loopback (reused when they already answer);
#   2. build bin/api and bin/loadtest;
#   3. start three API processes on 127.0.0.1:8081-8083, and three more on 8084-8086 with
#      LOCK_BACKEND=etcd (their dlock locks in the etcd of `make up`, ETCD_ENDPOINTS), each
#      with DB_MAX_CONNS 15 (six pools of 20 would pass PostgreSQL's 100 connections; logs in
#      .run/api-PORT.log);
#   4. loadtest compare: every strategy on a fresh product, dlock on both lock backends (the
#      first three APIs, then the three on etcd: -etcd-targets), each audited through the API
#      and directly in PostgreSQL and Redis, then the sold-out rejection baselines; print the
#      table, with etcd's orders/s and p99 over Redis's;
#   5. stop the APIs (also on Ctrl-C or failure).
#
# Extra arguments go to `loadtest compare` and override the scenario below. The exit status is
# loadtest's: 3 when a safe strategy oversold (or naive did not), 1 when something could not run.
# ETCD_API_PORTS='' leaves the etcd APIs out (dlock then runs on Redis only).
# scripts/bench.sh, bench-hot.sh and demo-ui.sh source this file for start_apis and stop_apis;
# they may redefine on_exit, what runs when they exit (stop_apis here).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
API_PORTS=${API_PORTS:-"8081 8082 8083"}
ETCD_API_PORTS=${ETCD_API_PORTS-"8084 8085 8086"} # set but empty: no APIs with their locks in etcd
# Where the etcd APIs take their locks: the etcd of `make up` unless set (start_etcd_apis
# passes it to them; the other APIs do not need it).
ETCD_ENDPOINTS=${ETCD_ENDPOINTS:-http://127.0.0.1:${ETCD_PORT:-2379}}
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

# launch_apis PORT...: one API process per PORT, with the caller's environment; adds their pids
# to API_PIDS and sets URLS to their base URLs.
launch_apis() {
	mkdir -p "$RUN_DIR"
	URLS=
	local port
	for port in "$@"; do
		port_taken "$port" && die "port $port is taken; free it or set API_PORTS / ETCD_API_PORTS (e.g. API_PORTS='9081 9082 9083')"
	done
	trap on_exit EXIT
	trap 'exit 130' INT TERM
	for port in "$@"; do
		HTTP_ADDR=127.0.0.1:$port LOG_LEVEL=${LOG_LEVEL:-warn} bin/api >"$RUN_DIR/api-$port.log" 2>&1 &
		API_PIDS+=("$!")
		URLS+=${URLS:+,}http://127.0.0.1:$port
	done
}

# start_apis: one API process per port in API_PORTS; sets TARGETS to their base URLs.
start_apis() {
	# shellcheck disable=SC2086 # a list of ports
	launch_apis $API_PORTS
	TARGETS=$URLS
	say "started $(wc -w <<<"$API_PORTS") API processes: $TARGETS (logs: .run/api-PORT.log)"
}

# start_etcd_apis: one API process per port in ETCD_API_PORTS with LOCK_BACKEND=etcd, the dlock
# strategy's locks in the etcd at ETCD_ENDPOINTS; sets ETCD_TARGETS to their base URLs.
start_etcd_apis() {
	# shellcheck disable=SC2086 # a list of ports
	LOCK_BACKEND=etcd ETCD_ENDPOINTS=$ETCD_ENDPOINTS launch_apis $ETCD_API_PORTS
	ETCD_TARGETS=$URLS
	say "started $(wc -w <<<"$ETCD_API_PORTS") API processes with their locks in etcd ($ETCD_ENDPOINTS): $ETCD_TARGETS"
}

# on_exit: what runs when the script exits; the scripts that source this one may redefine it.
on_exit() { stop_apis; }

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
	local etcd=()
	if [ -n "$ETCD_API_PORTS" ]; then
		# Six processes with the default pool of 20 would pass PostgreSQL's default
		# max_connections (100): 15 each, for both backends alike.
		export DB_MAX_CONNS=${DB_MAX_CONNS:-15}
	fi
	start_apis
	if [ -n "$ETCD_API_PORTS" ]; then
		start_etcd_apis
		etcd=(-etcd-targets "$ETCD_TARGETS")
	fi
	# About a minute: compare's 6 strategies (dlock, naive, pessimistic, optimistic, redis,
	# queue; dlock twice: on Redis, then on etcd) and 2 baselines, each sells out in a few
	# seconds (think_ms 5 keeps the one-at-a-time strategies near 150 orders/s and makes naive
	# oversell), then measures sold-out rejection for 2 s; naive never sells out and stops at
	# 8 s. The queue's audit waits for its stream to drain (at most 30 s).
	local status=0
	bin/loadtest compare -targets "$TARGETS" "${etcd[@]}" \
		-stock 200 -think-ms 5 -workers 64 -repeat-share 0.1 \
		-duration 8s -requests 200000 -after-soldout 2s -timeout 10s \
		-json "$RUN_DIR/demo.json" -plot "$RUN_DIR/demo.html" "$@" || status=$?
	if [ $status = 1 ]; then
		local port
		for port in $API_PORTS $ETCD_API_PORTS; do say "last lines of .run/api-$port.log:"; tail -n 5 "$RUN_DIR/api-$port.log" >&2 || true; done
	else
		say "full report: .run/demo.json; latency plot by outcome: .run/demo.html"
	fi
	return $status
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi

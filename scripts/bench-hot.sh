#!/usr/bin/env bash
# bench-hot.sh: one hot product, the dlock strategy, group commit on and off, locks in Redis
# and in etcd.
#
# For each BATCH_MAX in HOT_BATCH (default "128 1": on, off) and each number of concurrent
# buyers in HOT_WORKERS (default "64 512"), it starts three API processes, runs
# `loadtest compare -strategies dlock` HOT_RUNS times (default 3) on a product whose stock
# never runs out within HOT_DURATION (default 8s), and records the medians of orders/s and
# p99 latency in bench/hot-<UTC date>-<host>.md (and one JSON per configuration). With the
# first BATCH_MAX, each round also attacks a sold-out product on the same processes and the
# ceiling (bare gin handlers that answer 409 and do nothing else), back to back with the hot
# product: the record sets the hot product against the sold-out one round by round, since the
# machine's speed drifts over minutes. Then open-loop rows: requests at a constant rate per
# HOT_RATES (default "1000 2000 4000"), up to 512 waiting at once. The last line is the CPU
# steal over the attacks. loadtest record writes the markdown from the JSON reports.
#
# Lock backends: for each etcd topology in HOT_ETCD (default "1 3": the one member of `make
# up` at ETCD_ENDPOINTS, and three members this script starts with scripts/cluster.sh on
# HOT_ETCD_PORTS, default 23891-23893, peers +10, and stops at the end) and each HOT_WORKERS,
# three more API processes with LOCK_BACKEND=etcd on that etcd (ETCD_API_PORTS, 8084-8086;
# all six with DB_MAX_CONNS HOT_ETCD_DB_MAX_CONNS, default 15), and `loadtest compare
# -strategies dlock -etcd-targets`: dlock on Redis, then on etcd, the same buyers back to back
# in each of the HOT_RUNS rounds; the record's second table puts them side by side with etcd's
# ratios to Redis. HOT_ETCD='' leaves them out.
#
# Run time with the defaults: 8.5 to 9.5 minutes on a 2-core machine, about 4 of them for the
# etcd rows.
set -euo pipefail
# shellcheck source=scripts/demo.sh
source "$(dirname "${BASH_SOURCE[0]}")/demo.sh" # cds to the repository; start_apis, stop_apis, build
# dlock alone, no think_ms: the production build serves it (launch_apis starts $API_BIN).
API_BIN=${API_BIN:-bin/api}

HOT_BATCH=${HOT_BATCH:-"128 1"}
HOT_WORKERS=${HOT_WORKERS:-"64 512"}
HOT_RUNS=${HOT_RUNS:-3}
HOT_DURATION=${HOT_DURATION:-8s}
HOT_RATES=${HOT_RATES:-"1000 2000 4000"}
HOT_ETCD=${HOT_ETCD-"1 3"} # set but empty: no etcd rows
HOT_ETCD_PORTS=${HOT_ETCD_PORTS:-"23891 23892 23893"}
# The pool of each of the six APIs of the etcd rows: six of the default 20 would pass
# PostgreSQL's default max_connections (100).
HOT_ETCD_DB_MAX_CONNS=${HOT_ETCD_DB_MAX_CONNS:-15}
# The three-member etcd's own directory: cluster.sh down stops what cluster.sh up started there
# and nothing else (not the cluster of `make cluster-up`).
HOT_ETCD_DIR=$PWD/.run/bench-hot-etcd

# hot_cluster up|down: the three-member etcd of the etcd rows, and only that (no Redis).
hot_cluster() {
	CLUSTER_PORTS='' REDLOCK_PORTS='' ETCD_CLUSTER_PORTS=$HOT_ETCD_PORTS CLUSTER_DIR=$HOT_ETCD_DIR \
		scripts/cluster.sh "$1" >/dev/null
}

# on_exit: stop the APIs, and the three-member etcd if this script started it.
HOT_CLUSTER_UP=
on_exit() {
	stop_apis
	[ -z "$HOT_CLUSTER_UP" ] || hot_cluster down
}

hot_main() {
	scripts/infra.sh up
	build
	local stamp dir out
	stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
	dir=bench/hot-$stamp-$(hostname -s)
	mkdir -p "$dir"
	out=$dir.md
	# Each report carries the machine, the commit and the CPU steal over its attacks; -meta
	# adds the API's BATCH_MAX, which loadtest cannot know. loadtest record writes the rows in
	# the order of the reports.
	local reports=() batch workers rate json baseline=true
	local hot=(-strategies dlock -baseline=false -expect-naive-oversell=false -stock 50000000
		-duration "$HOT_DURATION" -requests 5000000 -runs "$HOT_RUNS" -progress 0)
	for batch in $HOT_BATCH; do
		for workers in $HOT_WORKERS; do
			json=$dir/batch$batch-w$workers.json
			BATCH_MAX=$batch start_apis
			# -baseline: the sold-out product and the ceiling in each round (first BATCH_MAX).
			bin/loadtest compare -targets "$TARGETS" "${hot[@]}" -baseline="$baseline" -workers "$workers" \
				-meta "batch_max=$batch" -json "$json" >/dev/null
			stop_apis
			reports+=("$json")
		done
		baseline=false
	done
	# Lock backends: dlock with its locks in Redis, then in etcd (one member, then three), the
	# same buyers, back to back in each round; BATCH_MAX at its default. -meta etcd_members
	# names the topology in the record.
	local members endpoints
	for members in $HOT_ETCD; do
		endpoints=$ETCD_ENDPOINTS
		if [ "$members" = 3 ]; then
			HOT_CLUSTER_UP=1
			hot_cluster up
			endpoints=
			local port
			for port in $HOT_ETCD_PORTS; do endpoints+=${endpoints:+,}http://127.0.0.1:$port; done
		elif [ "$members" != 1 ]; then
			die "HOT_ETCD: $members: want 1 (ETCD_ENDPOINTS) or 3 (a cluster of HOT_ETCD_PORTS)"
		fi
		for workers in $HOT_WORKERS; do
			json=$dir/etcd$members-w$workers.json
			DB_MAX_CONNS=$HOT_ETCD_DB_MAX_CONNS start_apis
			DB_MAX_CONNS=$HOT_ETCD_DB_MAX_CONNS ETCD_ENDPOINTS=$endpoints start_etcd_apis
			bin/loadtest compare -targets "$TARGETS" -etcd-targets "$ETCD_TARGETS" "${hot[@]}" -workers "$workers" \
				-meta "batch_max=${BATCH_MAX:-128}" -meta "db_max_conns=$HOT_ETCD_DB_MAX_CONNS" \
				-meta "etcd_members=$members" -meta "etcd_endpoints=$endpoints" -json "$json" >/dev/null
			stop_apis
			reports+=("$json")
		done
		if [ "$members" = 3 ]; then
			hot_cluster down
			HOT_CLUSTER_UP=
		fi
	done
	# Open loop: requests arrive at a constant rate whether or not earlier ones were answered
	# (up to 512 waiting at once), the way a crowd arrives; group commit at its default.
	for rate in $HOT_RATES; do
		json=$dir/rate$rate.json
		start_apis
		bin/loadtest compare -targets "$TARGETS" "${hot[@]}" -rate "$rate" -workers 64 -max-workers 512 \
			-meta "batch_max=${BATCH_MAX:-128}" -json "$json" >/dev/null
		stop_apis
		reports+=("$json")
	done
	bin/loadtest record -format hot -stamp "$stamp" -o "$out" "${reports[@]}"
	cat "$out"
	say "record: $out (JSON per configuration in $dir/)"
}

hot_main "$@"

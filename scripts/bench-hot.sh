#!/usr/bin/env bash
# bench-hot.sh: one hot product, the dlock strategy, group commit on and off.
#
# For each BATCH_MAX in HOT_BATCH (default "128 1": on, off) and each number of concurrent
# buyers in HOT_WORKERS (default "64 512"), it starts three API processes, runs
# `loadtest compare -strategies dlock` HOT_RUNS times (default 3) on a product whose stock
# never runs out within HOT_DURATION (default 8s), and records the medians of orders/s and
# p99 latency in bench/hot-<UTC date>-<host>.md (and one JSON per configuration). Last, the
# ceiling: bare gin handlers that answer 409 and do nothing else, attacked the same way.
# Between the two, open-loop rows: requests at a constant rate per HOT_RATES (default
# "1000 2000 4000"), up to 512 waiting at once. The last line is the CPU steal over the
# attacks. loadtest record writes the markdown from the JSON reports.
set -euo pipefail
# shellcheck source=scripts/demo.sh
source "$(dirname "${BASH_SOURCE[0]}")/demo.sh" # cds to the repository; start_apis, stop_apis, build

HOT_BATCH=${HOT_BATCH:-"128 1"}
HOT_WORKERS=${HOT_WORKERS:-"64 512"}
HOT_RUNS=${HOT_RUNS:-3}
HOT_DURATION=${HOT_DURATION:-8s}
HOT_RATES=${HOT_RATES:-"1000 2000 4000"}

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
	local reports=() batch workers rate json
	local hot=(-strategies dlock -baseline=false -expect-naive-oversell=false -stock 50000000
		-duration "$HOT_DURATION" -requests 5000000 -runs "$HOT_RUNS" -progress 0)
	for batch in $HOT_BATCH; do
		for workers in $HOT_WORKERS; do
			json=$dir/batch$batch-w$workers.json
			BATCH_MAX=$batch start_apis
			bin/loadtest compare -targets "$TARGETS" "${hot[@]}" -workers "$workers" \
				-meta "batch_max=$batch" -json "$json" >/dev/null
			stop_apis
			reports+=("$json")
		done
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
	# The ceiling: the same attack on bare gin handlers that only answer 409 (HTTP and the load
	# generator, no work), beside a sold-out product on the API.
	for workers in $HOT_WORKERS; do
		json=$dir/ceiling-w$workers.json
		start_apis
		bin/loadtest baseline -targets "$TARGETS" -workers "$workers" -duration "$HOT_DURATION" \
			-requests 5000000 -runs "$HOT_RUNS" -progress 0 -json "$json" >/dev/null
		stop_apis
		reports+=("$json")
	done
	bin/loadtest record -format hot -stamp "$stamp" -o "$out" "${reports[@]}"
	cat "$out"
	say "record: $out (JSON per configuration in $dir/)"
}

hot_main "$@"

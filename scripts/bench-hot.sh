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
# "1000 2000 4000"), up to 512 waiting at once.
set -euo pipefail
# shellcheck source=scripts/demo.sh
source "$(dirname "${BASH_SOURCE[0]}")/demo.sh" # cds to the repository; start_apis, stop_apis, build

HOT_BATCH=${HOT_BATCH:-"128 1"}
HOT_WORKERS=${HOT_WORKERS:-"64 512"}
HOT_RUNS=${HOT_RUNS:-3}
HOT_DURATION=${HOT_DURATION:-8s}
HOT_RATES=${HOT_RATES:-"1000 2000 4000"}

# cpu_ticks prints the busy-or-idle and the steal jiffies of all CPUs (/proc/stat), to tell
# how much of the machine the hypervisor took during the measurements.
cpu_ticks() { awk '/^cpu /{t=0; for (i=2; i<=NF; i++) t+=$i; print t, $9; exit}' /proc/stat; }

hot_main() {
	scripts/infra.sh up
	build
	local stamp out dir
	stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
	dir=bench/hot-$stamp-$(hostname -s)
	mkdir -p "$dir"
	out=$dir.md
	{
		echo "# Hot product, dlock strategy, group commit on and off ($stamp)"
		echo
		echo "- machine: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n1), $(nproc) cores; $("$GO" version | cut -d' ' -f3)"
		echo "- three API processes, one product (stock 50,000,000: never sells out), think_ms 0,"
		echo "  10 % repeat buyers, each attack $HOT_DURATION, medians of $HOT_RUNS runs; commit $(git rev-parse --short HEAD)"
		echo
		echo "| BATCH_MAX | buyers at once | orders/s | p99 (ms) | p99 of purchases (ms) | oversold | dupes | errors |"
		echo "|---|---|---|---|---|---|---|---|"
	} >"$out"
	local batch workers json t0 s0 t1 s1
	read -r t0 s0 < <(cpu_ticks)
	for batch in $HOT_BATCH; do
		for workers in $HOT_WORKERS; do
			json=$dir/batch$batch-w$workers.json
			BATCH_MAX=$batch start_apis
			bin/loadtest compare -targets "$TARGETS" -strategies dlock -baseline=false \
				-expect-naive-oversell=false -stock 50000000 -workers "$workers" \
				-duration "$HOT_DURATION" -requests 5000000 -runs "$HOT_RUNS" -progress 0 \
				-json "$json" >/dev/null
			stop_apis
			python3 - "$json" "$batch" "$workers" >>"$out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["summary"][0]
print(f"| {sys.argv[2]} | {sys.argv[3]} | {r['orders_per_sec']:.0f} | {r['p99_ms']:.1f} | "
      f"{r['p99_bought_ms']:.1f} | {r['oversold']} | {r['dupes']} | {r['errors']} |")
PY
		done
	done
	# Open loop: requests arrive at a constant rate whether or not earlier ones were answered
	# (up to 512 waiting at once), the way a crowd arrives; group commit at its default.
	local rate
	for rate in $HOT_RATES; do
		json=$dir/rate$rate.json
		start_apis
		bin/loadtest compare -targets "$TARGETS" -strategies dlock -baseline=false \
			-expect-naive-oversell=false -stock 50000000 -rate "$rate" -workers 64 -max-workers 512 \
			-duration "$HOT_DURATION" -requests 5000000 -runs "$HOT_RUNS" -progress 0 \
			-json "$json" >/dev/null
		stop_apis
		python3 - "$json" "$rate" >>"$out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["summary"][0]
print(f"| 128 | open loop, {sys.argv[2]} requests/s | {r['orders_per_sec']:.0f} | {r['p99_ms']:.1f} | "
      f"{r['p99_bought_ms']:.1f} | {r['oversold']} | {r['dupes']} | {r['errors']} |")
PY
	done
	# The ceiling: the same attack on bare gin handlers that only answer 409 (HTTP and the load
	# generator, no work), beside a sold-out product on the API.
	for workers in $HOT_WORKERS; do
		json=$dir/ceiling-w$workers.json
		start_apis
		bin/loadtest baseline -targets "$TARGETS" -workers "$workers" -duration "$HOT_DURATION" \
			-requests 5000000 -runs "$HOT_RUNS" -progress 0 -json "$json" >/dev/null
		stop_apis
		python3 - "$json" "$workers" >>"$out" <<'PY'
import json, sys
r = next(r for r in json.load(open(sys.argv[1]))["summary"] if r["name"] == "bare gin 409")
print(f"| bare gin 409 (ceiling) | {sys.argv[2]} | {r['rejections_per_sec']:.0f} answers/s | {r['p99_ms']:.1f} | - | - | - | {r['errors']} |")
PY
	done
	read -r t1 s1 < <(cpu_ticks)
	{
		echo
		echo "CPU steal (time the hypervisor gave to other guests) during the measurements:" \
			"$(awk -v t="$((t1 - t0))" -v s="$((s1 - s0))" 'BEGIN { printf "%.1f %%", t ? 100 * s / t : 0 }')"
	} >>"$out"
	cat "$out"
	say "record: $out (JSON per configuration in $dir/)"
}

hot_main "$@"

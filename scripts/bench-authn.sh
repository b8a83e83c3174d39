#!/usr/bin/env bash
# bench-authn.sh: what buyer identity costs on the hot path. Two API processes on the same
# PostgreSQL and Redis, one with buyer identity off (AUTHN_OFF_PORT, default 8191) and one on
# (AUTHN_ON_PORT, 8192: a JWKS of three keys that `loadtest keys` makes in .run/authn-keys,
# one per algorithm, the verified-token cache as configured, AUTH_CACHE, default 65536), run
# as copies of bin/api named authn-off and authn-on so that the reports' CPU time by command
# tells them apart. A sold-out product (stock 0) is attacked, AUTHN_WORKERS buyers at once
# (default 64) for AUTHN_DURATION (4s) or AUTHN_REQUESTS requests (40000), unsigned against
# the first and signed with each of AUTHN_ALGS (EdDSA ES256 RS256) against the second, for
# each share of buyers trying again in AUTHN_REPEATS (0.1 0.9: mostly new buyers, each with a
# token the API has not seen, then mostly buyers sending the token they had: the cache's
# hits), AUTHN_RUNS rounds (3) whose order rotates. loadtest mints every buyer's token before
# each attack (as many as AUTHN_REQUESTS), so the measured window holds no signing; a run that
# minted any during its attack fails the bench. It prints the medians of sold-out answers/s,
# the ratio on/off within each round, and the API's CPU per answer; the JSON reports stay in
# .run/authn-bench. With AUTHN_HOT=1 it also attacks a hot dlock product that never runs
# out (orders/s).
set -euo pipefail
# shellcheck source=scripts/demo.sh
source "$(dirname "${BASH_SOURCE[0]}")/demo.sh" # cds to the repository; stop_apis, build

AUTHN_RUNS=${AUTHN_RUNS:-3}
AUTHN_DURATION=${AUTHN_DURATION:-4s}
AUTHN_WORKERS=${AUTHN_WORKERS:-64}
AUTHN_REQUESTS=${AUTHN_REQUESTS:-40000}
AUTHN_REPEATS=${AUTHN_REPEATS:-0.1 0.9}
AUTHN_ALGS=${AUTHN_ALGS:-EdDSA ES256 RS256}
AUTHN_HOT=${AUTHN_HOT:-0}
AUTHN_OFF_PORT=${AUTHN_OFF_PORT:-8191}
AUTHN_ON_PORT=${AUTHN_ON_PORT:-8192}

on_exit() { stop_apis; }

# launch_named NAME PORT: bin/api copied to .run/NAME and started on PORT with the caller's
# environment; its pid joins API_PIDS (stop_apis stops it). loadtest waits for its /readyz.
launch_named() {
	port_taken "$2" && die "port $2 is taken; free it or set AUTHN_OFF_PORT / AUTHN_ON_PORT"
	trap on_exit EXIT
	trap 'exit 130' INT TERM
	cp bin/api "$RUN_DIR/$1"
	HTTP_ADDR=127.0.0.1:$2 LOG_LEVEL=${LOG_LEVEL:-warn} "$RUN_DIR/$1" >"$RUN_DIR/$1.log" 2>&1 &
	API_PIDS+=("$!")
}

authn_main() {
	scripts/infra.sh up
	build
	local keys=$RUN_DIR/authn-keys out=$RUN_DIR/authn-bench r repeat mode modes i n alg target
	rm -rf "$out" "$keys" && mkdir -p "$out" "$keys"
	local add=()
	for alg in $AUTHN_ALGS; do # one JWKS of every key; each private key beside it
		bin/loadtest keys -dir "$keys" -alg "$alg" "${add[@]}" >/dev/null
		mv "$keys/buyer-signing-key.pem" "$keys/$alg.pem"
		add=(-add)
	done
	mkdir -p "$RUN_DIR"
	launch_named authn-off "$AUTHN_OFF_PORT"
	AUTH_JWKS_FILE=$keys/buyer-jwks.json AUTH_AUDIENCE=seckill AUTH_ISSUER=seckill-loadtest launch_named authn-on "$AUTHN_ON_PORT"
	local common=(-strategy dlock -workers "$AUTHN_WORKERS" -duration "$AUTHN_DURATION" -requests "$AUTHN_REQUESTS"
		-progress 0 -audit api)
	read -ra modes <<<"off $AUTHN_ALGS"
	n=${#modes[@]}
	for r in $(seq "$AUTHN_RUNS"); do
		for repeat in $AUTHN_REPEATS; do
			for i in $(seq 0 $((n - 1))); do # round r starts at mode r-1: each mode takes each place
				mode=${modes[$(((i + r - 1) % n))]}
				local sign=() target=http://127.0.0.1:$AUTHN_OFF_PORT
				if [ "$mode" != off ]; then
					target=http://127.0.0.1:$AUTHN_ON_PORT sign=(-sign-key "$keys/$mode.pem")
				fi
				say "round $r, repeat share $repeat: $mode"
				bin/loadtest run -targets "$target" "${common[@]}" -repeat-share "$repeat" "${sign[@]}" -stock 0 \
					-json "$out/soldout-$repeat-$mode-$r.json" >/dev/null 2>"$out/soldout-$repeat-$mode-$r.log"
				if [ "$AUTHN_HOT" = 1 ]; then
					bin/loadtest run -targets "$target" "${common[@]}" -repeat-share "$repeat" "${sign[@]}" -stock 50000000 \
						-json "$out/hot-$repeat-$mode-$r.json" >/dev/null 2>"$out/hot-$repeat-$mode-$r.log"
				fi
			done
		done
	done
	python3 - "$out" "$AUTHN_RUNS" "$AUTHN_HOT" "$AUTHN_REPEATS" "$AUTHN_ALGS" <<'PY'
import json, statistics, sys
out, runs, hot = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
repeats, algs = sys.argv[4].split(), sys.argv[5].split()
late = []
def run(kind, repeat, mode, r):
    rep = json.load(open(f"{out}/{kind}-{repeat}-{mode}-{r}.json"))
    x = rep["rounds"][0][0]
    if x["buyers"].get("late_tokens", 0):
        late.append(f"{kind}-{repeat}-{mode}-{r}: {x['buyers']['late_tokens']}")
    return x
def api_us(x, mode):  # the attacked API's CPU per answer, in µs (ticks of 10 ms)
    st = x["stats"]
    name = "authn-off" if mode == "off" else "authn-on"
    return st.get("cpu_ticks_by_command", {}).get(name, 0) * 1e4 / max(1, st["requests"])
def lg_us(x):
    st = x["stats"]
    return st.get("cpu_ticks_by_command", {}).get("loadtest", 0) * 1e4 / max(1, st["requests"])
med = statistics.median
for kind, key, what in [("soldout", "rejections_per_sec", "sold-out answers/s")] + ([("hot", "orders_per_sec", "hot orders/s")] if hot else []):
    for repeat in repeats:
        off = [run(kind, repeat, "off", r) for r in range(1, runs + 1)]
        print(f"{what}, repeat share {repeat}: off {med([x['stats'][key] for x in off]):.0f}/s,"
              f" API {med([api_us(x, 'off') for x in off]):.0f} µs and loadtest {med([lg_us(x) for x in off]):.0f} µs CPU an answer")
        for alg in algs:
            on = [run(kind, repeat, alg, r) for r in range(1, runs + 1)]
            ratios = sorted(a["stats"][key] / b["stats"][key] for a, b in zip(on, off))
            print(f"  {alg}: {med([x['stats'][key] for x in on]):.0f}/s, {med(ratios):.2f}x (rounds {ratios[0]:.2f}x to {ratios[-1]:.2f}x),"
                  f" API {med([api_us(x, alg) for x in on]):.0f} µs and loadtest {med([lg_us(x) for x in on]):.0f} µs CPU an answer,"
                  f" {med([x['buyers']['distinct'] for x in on]):.0f} distinct buyers")
if late:
    print("tokens minted during the attack (the figures include signing):", "; ".join(late))
    sys.exit(1)
PY
}

authn_main "$@"

#!/usr/bin/env bash
# bench-authn.sh: what buyer identity costs on the hot path. Two API processes on the same
# PostgreSQL and Redis, one with buyer identity off (AUTHN_OFF_PORT, default 8191) and one on
# (AUTHN_ON_PORT, 8192: a JWKS `loadtest keys` makes in .run/authn-keys, the verified-token
# cache as configured, AUTH_CACHE, default 65536), attacked in turn, AUTHN_RUNS rounds
# (default 5) whose order alternates: a sold-out product (stock 0: sold-out answers/s) and a
# hot dlock product that never runs out (orders/s), each for AUTHN_DURATION (default 4s) with
# AUTHN_WORKERS buyers at once (default 64), a share AUTHN_REPEAT of the requests (default
# 0.1) from buyers who try again (they send the token they had: the cache's hits). Signed
# runs use -sign-key; loadtest mints each new buyer's token on the same machine. It prints each round's figures and the medians with the ratios on/off; the
# JSON reports stay in .run/authn-bench.
set -euo pipefail
# shellcheck source=scripts/demo.sh
source "$(dirname "${BASH_SOURCE[0]}")/demo.sh" # cds to the repository; launch_apis, stop_apis, build

AUTHN_RUNS=${AUTHN_RUNS:-5}
AUTHN_DURATION=${AUTHN_DURATION:-4s}
AUTHN_WORKERS=${AUTHN_WORKERS:-64}
AUTHN_REPEAT=${AUTHN_REPEAT:-0.1}
AUTHN_OFF_PORT=${AUTHN_OFF_PORT:-8191}
AUTHN_ON_PORT=${AUTHN_ON_PORT:-8192}

on_exit() { stop_apis; }

authn_main() {
	scripts/infra.sh up
	build
	local keys=$RUN_DIR/authn-keys out=$RUN_DIR/authn-bench off on r mode first second
	rm -rf "$out" && mkdir -p "$out"
	bin/loadtest keys -dir "$keys" -force >/dev/null
	launch_apis "$AUTHN_OFF_PORT"
	off=$URLS
	AUTH_JWKS_FILE=$keys/buyer-jwks.json AUTH_AUDIENCE=seckill AUTH_ISSUER=seckill-loadtest launch_apis "$AUTHN_ON_PORT"
	on=$URLS
	local common=(-strategy dlock -workers "$AUTHN_WORKERS" -duration "$AUTHN_DURATION" -requests 5000000 -progress 0 -audit api
		-repeat-share "$AUTHN_REPEAT")
	for r in $(seq "$AUTHN_RUNS"); do
		first=off second=on
		[ $((r % 2)) -eq 0 ] && first=on second=off
		for mode in $first $second; do
			local target=$off sign=()
			[ "$mode" = on ] && target=$on sign=(-sign-key "$keys/buyer-signing-key.pem")
			bin/loadtest run -targets "$target" "${common[@]}" "${sign[@]}" -stock 0 -json "$out/soldout-$mode-$r.json" >/dev/null
			bin/loadtest run -targets "$target" "${common[@]}" "${sign[@]}" -stock 50000000 -json "$out/hot-$mode-$r.json" >/dev/null
		done
	done
	python3 - "$out" "$AUTHN_RUNS" <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
def stat(kind, mode, r, key):
    rep = json.load(open(f"{out}/{kind}-{mode}-{r}.json"))
    return rep["rounds"][0][0]["stats"][key]
rows = {}
for kind, key in (("soldout", "rejections_per_sec"), ("hot", "orders_per_sec")):
    for mode in ("off", "on"):
        rows[kind, mode] = [stat(kind, mode, r, key) for r in range(1, runs + 1)]
for r in range(runs):
    print(f"round {r+1}: sold-out answers/s off {rows['soldout','off'][r]:.0f} on {rows['soldout','on'][r]:.0f}"
          f" ({rows['soldout','on'][r]/rows['soldout','off'][r]:.2f}x); hot orders/s off {rows['hot','off'][r]:.0f}"
          f" on {rows['hot','on'][r]:.0f} ({rows['hot','on'][r]/rows['hot','off'][r]:.2f}x)")
for kind, what in (("soldout", "sold-out answers/s"), ("hot", "hot product orders/s")):
    a, b = statistics.median(rows[kind, "off"]), statistics.median(rows[kind, "on"])
    ratios = sorted(on / off for on, off in zip(rows[kind, "on"], rows[kind, "off"]))
    print(f"median {what}: off {a:.0f}, on {b:.0f}: {b/a:.2f}x (per round {ratios[0]:.2f}x to {ratios[-1]:.2f}x)")
PY
}

authn_main "$@"

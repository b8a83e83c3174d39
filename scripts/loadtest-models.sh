#!/usr/bin/env bash
# loadtest-models.sh: measures docs/loadtest-models.svg, open against closed load on the same
# saturated service (docs/loadtest.md, "Load models"). Starts PostgreSQL and Redis (make up)
# and one API process on 127.0.0.1:$MODELS_PORT (18181), then, on products of the pessimistic
# strategy with think_ms $MODELS_THINK_MS (2) and a stock that never runs out, so that every
# request does the same work under one hot row lock:
#   1. closed: $MODELS_WORKERS (32) workers as fast as answered, which finds the capacity C;
#   2. closed, paced as wrk2 at 2·C requests/s by the same workers;
#   3. open: 2·C arrivals/s, at most 4096 in flight;
# each for $MODELS_DURATION (10s), its JSON report in .run/models-*.json, and draws the picture
# from the three reports (internal/loadgen/cmd/modelsvg).
set -euo pipefail
# shellcheck source=scripts/demo.sh
source "$(dirname "${BASH_SOURCE[0]}")/demo.sh" # cds to the repository; launch_apis, stop_apis, build

MODELS_PORT=${MODELS_PORT:-18181}
MODELS_THINK_MS=${MODELS_THINK_MS:-2}
MODELS_WORKERS=${MODELS_WORKERS:-32}
MODELS_DURATION=${MODELS_DURATION:-10s}
export REDIS_KEY_PREFIX=seckill-models

models_main() {
	scripts/infra.sh up
	build
	launch_apis "$MODELS_PORT"
	local common=(-targets "$URLS" -strategy pessimistic -stock 100000000 -think-ms "$MODELS_THINK_MS"
		-repeat-share 0 -duration "$MODELS_DURATION" -requests 10000000 -timeout 30s -progress 0)
	say "1. closed, $MODELS_WORKERS workers"
	bin/loadtest run "${common[@]}" -workers "$MODELS_WORKERS" -json "$RUN_DIR/models-closed.json"
	local rate
	rate=$(jq '.rounds[0][0].stats.throughput * 2 | floor' "$RUN_DIR/models-closed.json")
	say "2. closed, $MODELS_WORKERS workers paced at $rate req/s (twice the capacity)"
	bin/loadtest run "${common[@]}" -model closed -workers "$MODELS_WORKERS" -rate "$rate" -json "$RUN_DIR/models-paced.json"
	say "3. open, $rate arrivals/s"
	bin/loadtest run "${common[@]}" -rate "$rate" -max-workers 4096 -json "$RUN_DIR/models-open.json"
	"$GO" run ./internal/loadgen/cmd/modelsvg -out docs/loadtest-models.svg \
		-title "p99 of one API (pessimistic, think_ms $MODELS_THINK_MS) under each load model, $MODELS_DURATION each" \
		"$RUN_DIR/models-closed.json" "$RUN_DIR/models-paced.json" "$RUN_DIR/models-open.json"
	say "wrote docs/loadtest-models.svg"
}

on_exit() { stop_apis; }

models_main "$@"

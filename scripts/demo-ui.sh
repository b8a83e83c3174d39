#!/usr/bin/env bash
# demo-ui.sh [loadtest ui flags...]: the live page, ready to run sales from a browser.
#
#   1. make up: PostgreSQL and Redis on loopback (reused when they already answer);
#   2. build bin/api, bin/labapi (the lab build, which it runs) and bin/loadtest;
#   3. start three API processes on 127.0.0.1:8081-8083 (logs in .run/api-PORT.log), as
#      make demo does;
#   4. serve `loadtest ui` on UI_ADDR (default 127.0.0.1:8090) with those three as its targets,
#      and print the address to open; runs are kept in .run/ui-runs;
#   5. on Ctrl-C: stop the page (a run going is stopped and written first), then the APIs.
#
# The form's Sale choice runs a flash sale, an abandonment sale, or an opening (a crowd waiting
# for the product's starts_at; its card marks T0 and draws the answers by outcome over time).
# The lab runs of the page start three API processes of their own (built from this checkout).
# Extra arguments go to `loadtest ui`.
set -euo pipefail
# shellcheck source=scripts/demo.sh
source "$(dirname "${BASH_SOURCE[0]}")/demo.sh" # cds to the repository; start_apis, stop_apis, build

UI_ADDR=${UI_ADDR:-127.0.0.1:8090}

demo_ui_main() {
	port_taken "${UI_ADDR##*:}" && die "port ${UI_ADDR##*:} is taken; free it or set UI_ADDR (e.g. UI_ADDR=127.0.0.1:8091)"
	scripts/infra.sh up
	build
	start_apis
	say "open http://$UI_ADDR/ in a browser (Ctrl-C stops the page and the APIs)"
	# Not exec: the EXIT trap of start_apis stops the APIs after the page stops.
	local status=0
	bin/loadtest ui -addr "$UI_ADDR" -targets "$TARGETS" -dir "$RUN_DIR/ui-runs" "$@" || status=$?
	[ $status = 130 ] && status=0 # Ctrl-C is how the page is stopped
	return $status
}

demo_ui_main "$@"

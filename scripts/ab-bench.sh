#!/usr/bin/env bash
# ab-bench.sh: one Go benchmark of two builds, the work tree and an older revision, in
# interleaved rounds, so that the machine's drift over minutes falls on both alike. Prints
# each round and the median ns/op of each build with their ratio.
#
#   scripts/ab-bench.sh REV PKG BENCH [ROUNDS] [BENCHTIME]
#   scripts/ab-bench.sh HEAD~1 ./internal/app/ 'SoldOutHTTP$' 7 20000x
#
# The benchmark's files are taken from the work tree for both builds (the old revision gets
# the new *_test.go files of PKG), so a benchmark added with the change measures the old code
# too; COPY_TESTS=0 keeps the old revision's own (when the new tests need new code). METRIC
# names the unit to compare (default ns/op; any the benchmark reports, such as
# dlock-redis-us/op), or several, separated by spaces. Needs the servers the benchmark needs
# (make up) and DATABASE_URL etc. set as make sets them.
#
#   COPY_TESTS=0 METRIC=dlock/redislock-redis-us scripts/ab-bench.sh 6872922 ./internal/dlock/ 'Peers$' 5 1x
set -euo pipefail
rev=${1:?revision}; pkg=${2:?package}; bench=${3:?benchmark regexp}
rounds=${4:-7}; benchtime=${5:-1s}; metric=${METRIC:-ns/op}
GO=${GO:-go}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
old="$tmp/old"
cleanup() { git -C "$root" worktree remove --force "$old" >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT
git -C "$root" worktree add -q --detach "$old" "$rev"
if [ "${COPY_TESTS:-1}" = 1 ]; then cp "$root/${pkg#./}"/*_test.go "$old/${pkg#./}/"; fi
(cd "$root" && $GO test -c -o "$tmp/new.test" "$pkg")
(cd "$old" && $GO test -c -o "$tmp/old.test" "$pkg")
for i in $(seq "$rounds"); do
	for build in old new; do
		(cd "$root/${pkg#./}" && "$tmp/$build.test" -test.run '^$' -test.bench "$bench" \
			-test.benchtime "$benchtime" -test.count 1) |
			awk -v b="$build" -v r="$i" -v ms="$metric" 'BEGIN { n = split(ms, want, " "); for (i = 1; i <= n; i++) w[want[i]] = 1 }
				/^Benchmark/ { for (f = 3; f <= NF; f++) if ($f in w) print b, r, $1 ":" $f, $(f - 1) }'
	done
done | tee "$tmp/rounds"
awk '{ v[$1 " " $3] = v[$1 " " $3] " " $4 } END {
	for (k in v) { n = split(substr(v[k], 2), a, " "); asort(a); m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2; med[k] = m }
	for (k in med) { split(k, p, " "); if (p[1] == "new") printf "%s: old %.4g, new %.4g, new/old %.2fx\n", p[2], med["old " p[2]], m = med[k], m / med["old " p[2]] }
}' "$tmp/rounds" | sort

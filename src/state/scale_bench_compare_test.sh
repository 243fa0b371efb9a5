#!/usr/bin/env bash
# ctest state_scale_bench_compare: `--lookups-only --compare-dir` over two kept states (two
# --small runs that wrote the records of 20,000 and 40,000 fetched pages): it must run every
# round and find, in both states, every admitted URL, fetched page and stored digest, and no
# absent URL or new digest.
# Usage: scale_bench_compare_test.sh STATE_SCALE_BENCH
set -euo pipefail
bench="$1"
d="$(mktemp -d)"
trap 'rm -rf "$d"' EXIT
"$bench" --small --fetched 20000 --lookups 20000 --no-restart --keep --dir "$d/a" > "$d/a.txt"
"$bench" --small --fetched 40000 --lookups 20000 --no-restart --keep --dir "$d/b" > "$d/b.txt"
"$bench" --small --fetched 20000 --lookups 20000 --rounds 4 --lookups-only --dir "$d/a" \
  --compare-dir "$d/b" --compare-urls 200000 --compare-fetched 40000 | tee "$d/out.txt"
fail=0
expect() {
  if ! grep -Eq "$1" "$d/out.txt"; then
    echo "FAIL: no line matching: $1"
    fail=1
  fi
}
expect '^  round  4: a +[0-9.]+, b +[0-9.]+ CPU-us'
for kind in admitted 'seen record' 'digest dup'; do
  expect "^  lookup $kind +a +[0-9.]+, b +[0-9.]+ .*found 100\.0% / 100\.0%$"
done
for kind in absent 'digest new'; do
  expect "^  lookup $kind +a +[0-9.]+, b +[0-9.]+ .*found 0\.0% / 0\.0%$"
done
expect '^  lookup depth +a +[0-9.]+, b +[0-9.]+ .*found 2[45]\.[0-9]% / 2[45]\.[0-9]%$'
expect '^compared lookups: a [0-9.]+, b [0-9.]+ CPU-us per lookup'
exit "$fail"

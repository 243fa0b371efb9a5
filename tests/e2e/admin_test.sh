#!/usr/bin/env bash
# End-to-end: the admin API over real HTTP against a running crawl of the test web
# (docs/admin-api.md). A test web of 20 hosts x 10 pages (5 links each) without cross-host links; the crawl
# (--delay-ms 200, --admin 127.0.0.1:0) gets the seeds of all hosts but the last, then
# admin_check.py live:
#  - GET /status shape; POST /hosts/h0001.test/policy crawl_delay_ms 1500 (a less polite
#    10 ms is 400 naming the rule, nothing changed); POST /seeds with the left-out host's root
#    (queued 1; again: rejected); POST /pause, 2 s, POST /resume; GET /hosts/{h}; PUT/DELETE
#    block; bad input for every endpoint (400/404/405/413, a JSON error naming the problem);
#    GET /pages paging and filters, /pages/{id}, its content; GET /metrics; GET /.
#  - promtool check metrics accepts /metrics.
# Then the crawl finishes (exit 0) and, from the test web's request log (admin_check.py log):
# the policy host's gaps after the policy are >= 1500 ms (start minus previous end, as the
# audit measures), the injected host was crawled, no request started while paused, none to
# the blocked host while blocked, nothing from a refused request. The audit: 0 violations,
# 100% coverage of all 20 hosts (the injected one included). Every CDXJ file is sorted.
# `harvest serve` over the crawl: complete, 409 for mutations, /pages pages through
# everything. A token (--admin-token-file): 401 without it, 200 with it; a non-loopback
# --admin without a token exits 2 naming the flag.
# Usage: admin_test.sh HARVEST_BIN
set -euo pipefail
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mktemp -d /tmp/harvest-e2e-admin.XXXXXX)"
web_pid="" crawl_pid="" serve_pid=""
cleanup() {
  for p in $serve_pid $crawl_pid $web_pid; do kill "$p" 2>/dev/null || true; done
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $out"; else rm -rf "$out"; fi
}
trap cleanup EXIT
hosts=20 pages=10 links=5 delay=200
t0=$(date +%s)
command -v promtool >/dev/null || { echo "FAIL: promtool is missing (Debian package prometheus; scripts/bootstrap installs it)"; exit 1; }

admin_url() {  # admin_url LOGFILE: wait for the "admin API listening on" line, print the URL
  for _ in $(seq 1 200); do grep -qs "admin API listening on" "$1" && break; sleep 0.05; done
  grep -o "admin API listening on http://[0-9.]*:[0-9]*" "$1" | sed 's/.*on //' | head -1
}

"$bin" testweb --listen 127.0.0.1:0 --hosts "$hosts" --pages "$pages" --links "$links" --no-hostile \
  --cross-host-share 0 --crawl-delay-percent 0 \
  --seeds "$out/all-seeds.txt" --log "$out/requests.jsonl" --manifest "$out/manifest.json" \
  > "$out/web.txt" 2>&1 &
web_pid=$!
for _ in $(seq 1 200); do grep -qs "listening on" "$out/web.txt" && break; sleep 0.05; done
port=$(grep -o "listening on [0-9.]*:[0-9]*" "$out/web.txt" | sed 's/.*://')
[ -n "$port" ] || { echo "FAIL: the test web did not start"; cat "$out/web.txt"; exit 1; }
host_of() { sed -n "$1p" "$out/all-seeds.txt" | sed -E 's#^https?://([^/:]+).*#\1#'; }
policy_host=$(host_of 2) block_host=$(host_of 3) inject_host=$(host_of "$hosts")
head -n $((hosts - 1)) "$out/all-seeds.txt" > "$out/seeds.txt"
if grep -q "$inject_host" "$out/seeds.txt"; then echo "FAIL: $inject_host is in the seeds"; exit 1; fi
echo "test web: $hosts hosts x $pages pages, no cross-host links; seeds: all but $inject_host"

timeout 120 "$bin" crawl --seeds "$out/seeds.txt" --out "$out/crawl" --delay-ms "$delay" \
  --connect-to "::127.0.0.1:$port" --allow-address 127.0.0.0/8 --per-ip-limit 0 --no-progress --workers 2 \
  --admin 127.0.0.1:0 > "$out/crawl.txt" 2>&1 &
crawl_pid=$!
base=$(admin_url "$out/crawl.txt")
[ -n "$base" ] || { echo "FAIL: no 'admin API listening on' line"; cat "$out/crawl.txt"; exit 1; }
echo "--- live checks against $base (policy $policy_host, inject $inject_host, block $block_host)"
python3 "$here/admin_check.py" live "$base" "$out/state.json" "$policy_host" "$inject_host" \
  "$block_host" "$out/metrics.txt"
echo "--- promtool check metrics"
promtool check metrics < "$out/metrics.txt" || { echo "FAIL: promtool check metrics"; exit 1; }
echo "ok: promtool accepts /metrics ($(grep -vc '^#' "$out/metrics.txt") samples)"

echo "--- waiting for the crawl to complete"
rc=0; wait "$crawl_pid" || rc=$?; crawl_pid=""
[ "$rc" = 0 ] || { echo "FAIL: the crawl exited $rc"; tail -20 "$out/crawl.txt"; exit 1; }
grep -E "^crawl complete|^  requests" "$out/crawl.txt"
kill -TERM "$web_pid"; wait "$web_pid" || true; web_pid=""

echo "--- request log checks"
python3 "$here/admin_check.py" log "$out/requests.jsonl" "$out/state.json" "$delay" \
  "$policy_host" "$inject_host" "$block_host"
echo "--- audit (0 violations, 100% coverage of the $hosts hosts, the injected one included)"
"$bin" audit --log "$out/requests.jsonl" --manifest "$out/manifest.json" --delay-ms "$delay" \
  > "$out/audit.txt" || { head -40 "$out/audit.txt"; echo "FAIL: audit"; exit 1; }
grep -E "^Violations|^Coverage" "$out/audit.txt"
echo "--- every CDXJ file is sorted"
n=0
for f in "$out"/crawl/*.cdxj; do
  LC_ALL=C sort -c "$f" || { echo "FAIL: $f is not sorted"; exit 1; }
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "FAIL: the crawl wrote no CDXJ file"; exit 1; }
echo "ok: $n CDXJ file(s) sorted ($(cat "$out"/crawl/*.cdxj | wc -l) lines)"

echo "--- harvest serve over the finished crawl"
"$bin" serve --out "$out/crawl" --admin 127.0.0.1:0 > "$out/serve.txt" 2>&1 &
serve_pid=$!
base=$(admin_url "$out/serve.txt")
[ -n "$base" ] || { echo "FAIL: harvest serve did not start"; cat "$out/serve.txt"; exit 1; }
python3 "$here/admin_check.py" serve "$base"
kill -TERM "$serve_pid"; rc=0; wait "$serve_pid" || rc=$?; serve_pid=""
echo "harvest serve stopped by SIGTERM: exit $rc"

echo "--- a token"
printf 's3cret-token_%s' "$RANDOM" > "$out/token"
"$bin" serve --out "$out/crawl" --admin 127.0.0.1:0 --admin-token-file "$out/token" \
  > "$out/serve-token.txt" 2>&1 &
serve_pid=$!
base=$(admin_url "$out/serve-token.txt")
[ -n "$base" ] || { echo "FAIL: harvest serve with a token did not start"; cat "$out/serve-token.txt"; exit 1; }
python3 "$here/admin_check.py" token "$base" "$(cat "$out/token")"
kill -TERM "$serve_pid"; wait "$serve_pid" || true; serve_pid=""
for cmd in crawl serve; do
  if [ "$cmd" = crawl ]; then
    args=(crawl --seeds "$out/seeds.txt" --out "$out/crawl-open" --connect-to "::127.0.0.1:1" --allow-address 127.0.0.0/8)
  else
    args=(serve --out "$out/crawl")
  fi
  rc=0; timeout 20 "$bin" "${args[@]}" --admin 0.0.0.0:0 > "$out/open.txt" 2>&1 || rc=$?
  if [ "$rc" != 2 ] || ! grep -q -- "--admin-token-file" "$out/open.txt"; then
    echo "FAIL: harvest $cmd --admin 0.0.0.0:0 without a token exited $rc:"; cat "$out/open.txt"; exit 1
  fi
  echo "ok: harvest $cmd --admin 0.0.0.0:0 without a token: exit 2, $(grep -o -- '--admin .*' "$out/open.txt" | head -1)"
done
echo "e2e admin: all checks passed in $(( $(date +%s) - t0 )) s"

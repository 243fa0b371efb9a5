#!/usr/bin/env bash
# End-to-end continuous crawl (docs/freshness.md): a test web whose changing pages get a new
# edition every 10 s, crawled with --recrawl --refresh-window 20s --stop-after 70s. Checks:
#  - exit 0 (--stop-after is a clean stop);
#  - the audit with --refresh-window 20s: 0 politeness, robots and within-window violations,
#    every page fetched at least twice;
#  - warcio reads every WARC; every 304 is a server-not-modified revisit, every changed page a
#    new response (check_recrawl.js).
# MODE https: the same over HTTPS (the test web's --tls --http-redirect, https:// seeds).
# Usage: recrawl_test.sh HARVEST_BIN [http|https]
set -euo pipefail
bin="$1" mode="${2:-http}"
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mktemp -d /tmp/harvest-recrawl.XXXXXX)"
web_pid=""
cleanup() { [ -n "$web_pid" ] && kill "$web_pid" 2>/dev/null; rm -rf "$out"; }
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
web_tls=() crawl_tls=()
if [ "$mode" = https ]; then
  web_tls=(--tls --tls-dir "$out/tls" --http-redirect)
  crawl_tls=(--ca-file "$out/tls/ca.pem")
fi

"$bin" testweb --listen 127.0.0.1:0 --hosts 6 --pages 8 --no-hostile --crawl-delay-percent 0 \
  --change-every 10s --change-percent 50 --seeds "$out/seeds.txt" --log "$out/requests.jsonl" \
  --manifest "$out/manifest.json" "${web_tls[@]}" > "$out/web.txt" 2>&1 &
web_pid=$!
for _ in $(seq 1 200); do grep -q "listening on" "$out/web.txt" 2>/dev/null && break; sleep 0.05; done
addr=$(grep -o "listening on [0-9.]*:[0-9]*" "$out/web.txt" | awk '{print $3}')
[ -n "$addr" ] || { echo "the test web did not start"; cat "$out/web.txt"; exit 1; }
for _ in $(seq 1 100); do [ -s "$out/seeds.txt" ] && break; sleep 0.05; done

start=$(date +%s)
"$bin" crawl --seeds "$out/seeds.txt" --out "$out/crawl" --delay-ms 200 --no-progress \
  --connect-to "::$addr" --allow-address 127.0.0.0/8 --per-ip-limit 0 --recrawl --refresh-window 20s --stop-after 70s \
  --summary-json "$out/summary.json" "${crawl_tls[@]}" > "$out/crawl.txt" 2> "$out/crawl-stderr.txt" || {
  echo "harvest crawl exited $?"; cat "$out/crawl.txt"; tail -20 "$out/crawl-stderr.txt"; exit 1; }
elapsed=$(( $(date +%s) - start ))
cat "$out/crawl.txt"
[ "$elapsed" -ge 69 ] && [ "$elapsed" -le 100 ] || { echo "crawl ran ${elapsed}s, expected ~70"; exit 1; }
grep -q '"stopped_after":true' "$out/summary.json" || { echo "summary does not say stopped_after"; exit 1; }
kill -TERM "$web_pid"; wait "$web_pid" 2>/dev/null || true; web_pid=""

echo "--- audit --refresh-window 20s"
"$bin" audit --log "$out/requests.jsonl" --manifest "$out/manifest.json" --delay-ms 200 \
  --refresh-window 20s --json > "$out/audit.json" || { cat "$out/audit.json"; exit 1; }
python3 - "$out/audit.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
v = a["violations"]
bad = {k: v[k] for k in ("concurrency", "delay", "robots", "within_window", "duplicate") if v.get(k)}
if bad: sys.exit(f"audit violations: {bad}")
f = a["fetches_per_page"]
if f["min"] < 2: sys.exit(f"a page was fetched fewer than twice: {f}")
if a["not_modified"] == 0 or a["conditional"] == 0: sys.exit("no conditional request / 304")
print(f"audit: 0 violations; fetches per page min {f['min']} median {f['median']} max {f['max']}; "
      f"{a['conditional']} conditional, {a['not_modified']} answered 304")
PY
echo "--- warcio"
node "$here/warcio_verify.js" --quiet "$out/crawl"
node "$here/check_recrawl.js" "$out/crawl" "$out/requests.jsonl" "$out/manifest.json"
echo "e2e recrawl ($mode): all checks passed"

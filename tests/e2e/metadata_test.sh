#!/usr/bin/env bash
# End-to-end: `harvest crawl --metadata` against a throw-away PostgreSQL (scripts/pg-local)
# over the test web, checked by tests/e2e/metadata_check.py:
#  - the rows with a WARC location are exactly the crawl's stored fetches (one per CDXJ line:
#    same WARC file and offset), none twice;
#  - every request in the test web's request log has exactly one row, URL by URL (so per host
#    and status too): robots.txt included, a retried attempt (a 408/429/5xx answer the
#    crawler asked again) and a request without a response (no status) included; in fault
#    mode only a request sent by the killed process whose URL was requested again after the
#    restart may have none;
#  - a SQL query for a page gives the WARC location from which `harvest warc cat` prints it;
#  - `harvest metadata export` of the crawl directory into a second database gives the
#    same rows, and into the first one adds none.
# Modes:
#   basic  one crawl of HOSTS x PAGES, with a 2.5 s total timeout so hostile.test's
#          /edge/slow (3 s before its status line) gets no response: rows without a status
#          (the audit, which cannot tell, is run without /edge/slow's requests)
#   fault  the database stopped ~10 s mid-crawl and restarted; the crawler SIGKILLed once
#          (while the database is down) and run again with the same command; the admin API's
#          /metrics and /status show the outage
#   workers  3 workers of a shared crawl (docs/distributed.md, a Redis Cluster the test
#          starts) write to one database; the rows are checked against the merged request
#          log and every worker's CDXJ
# Usage: metadata_test.sh HARVEST_BIN MODE HOSTS PAGES DELAY_MS
set -euo pipefail
bin="$1" mode="$2" hosts="$3" pages="$4" delay="$5"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$(mktemp -d /tmp/harvest-metadata.XXXXXX)"
chmod 0755 "$out"  # as root the server runs as nobody, which must reach $out/pg
web_pid="" crawl_pid=""
cleanup() {
  [ -n "$crawl_pid" ] && kill -9 "$crawl_pid" 2>/dev/null
  [ -n "$web_pid" ] && kill "$web_pid" 2>/dev/null
  bash "$root/scripts/pg-local" stop "$out/pg" >/dev/null 2>&1 || true
  [ -d "$out/redis" ] && bash "$root/scripts/redis-cluster" stop "$out/redis" >/dev/null 2>&1
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $out"; else rm -rf "$out"; fi
}
trap cleanup EXIT
now_us() { date +%s%6N; }

echo "--- PostgreSQL"
url="$(bash "$root/scripts/pg-local" start "$out/pg" --owner-pid $$ | tail -1)"
echo "database: $url"
"$bin" metadata migrate --to "$url"
# A URL libpq cannot parse is a usage error (exit 2) naming it; nothing is crawled.
usage_rc=0
"$bin" metadata migrate --to "redis://127.0.0.1:1" > "$out/usage1.txt" 2>&1 || usage_rc=$?
[ "$usage_rc" = 2 ] && grep -q "not a postgresql:// URL" "$out/usage1.txt" ||
  { echo "FAIL: migrate --to redis:// exited $usage_rc"; cat "$out/usage1.txt"; exit 1; }
printf 'http://a.test/\n' > "$out/one-seed.txt"
usage_rc=0
"$bin" crawl --seeds "$out/one-seed.txt" --out "$out/usage-crawl" --no-progress \
  --metadata "postgresql://127.0.0.1/db?bogus=1" > "$out/usage2.txt" 2>&1 || usage_rc=$?
[ "$usage_rc" = 2 ] && grep -q -- "--metadata: bad PostgreSQL URL" "$out/usage2.txt" ||
  { echo "FAIL: crawl --metadata with a bad URL exited $usage_rc"; cat "$out/usage2.txt"; exit 1; }

"$bin" testweb --listen 127.0.0.1:0 --hosts "$hosts" --pages "$pages" \
  --seeds "$out/seeds.txt" --log "$out/requests.jsonl" --manifest "$out/manifest.json" \
  > "$out/web.txt" 2>&1 &
web_pid=$!
for _ in $(seq 1 200); do grep -q "listening on" "$out/web.txt" && break; sleep 0.05; done
port=$(grep -o "listening on [0-9.]*:[0-9]*" "$out/web.txt" | sed 's/.*://')
[ -n "$port" ] || { echo "FAIL: the test web did not start"; cat "$out/web.txt"; exit 1; }
for _ in $(seq 1 100); do [ -s "$out/seeds.txt" ] && break; sleep 0.05; done

cfg="$root/scripts/testweb-crawl.toml"
if [ "$mode" = basic ]; then
  sed 's/^total_timeout_ms = .*/total_timeout_ms = 2500/' "$cfg" > "$out/crawl.toml"
  cfg="$out/crawl.toml"
fi
crawl() {  # the same command every time: it resumes the crawl in $out/crawl
  exec "$bin" crawl --seeds "$out/seeds.txt" --out "$out/crawl" \
    --config "$cfg" --delay-ms "$delay" \
    --connect-to "::127.0.0.1:$port" --allow-address 127.0.0.0/8 --per-ip-limit 0 --no-progress --workers 2 \
    --metadata "$url" --metadata-wait 60s "$@"
}

: > "$out/restarts.txt"
kill_us=0
start=$(date +%s)
dirs=("$out/crawl")
if [ "$mode" = workers ]; then
  seeds=$(bash "$root/scripts/redis-cluster" start "$out/redis" --masters 3 | tail -1)
  declare -A wpids=()
  for w in w1 w2 w3; do
    "$bin" crawl --seeds "$out/seeds.txt" --out "$out/$w" \
      --config "$root/scripts/testweb-crawl.toml" --delay-ms "$delay" \
      --connect-to "::127.0.0.1:$port" --allow-address 127.0.0.0/8 --per-ip-limit 0 --no-progress --workers 1 \
      --redis "redis://$seeds" --worker-id "$w" --redis-prefix md --partitions 64 \
      --metadata "$url" --metadata-wait 60s > "$out/$w.txt" 2>&1 &
    wpids[$w]=$!
  done
  rc=0
  for w in w1 w2 w3; do
    wrc=0
    # bounded: the workers finish in well under 120 s
    timeout 150 tail --pid="${wpids[$w]}" -f /dev/null || true
    wait "${wpids[$w]}" || wrc=$?
    if [ "$wrc" != 0 ]; then echo "FAIL: worker $w exited $wrc"; tail -20 "$out/$w.txt"; rc=1; fi
    grep -h "^metadata:" "$out/$w.txt" | sed "s/^/$w: /"
  done
  final="$out/w3.txt"
  dirs=("$out/w1" "$out/w2" "$out/w3")
elif [ "$mode" = fault ]; then
  crawl > "$out/run-1.txt" 2>&1 &
  crawl_pid=$!
  sleep 3
  echo "--- database stopped at $(( $(date +%s) - start )) s"
  db_stop=$(date +%s.%N)
  bash "$root/scripts/pg-local" stop "$out/pg"
  sleep 3
  kill -0 "$crawl_pid" 2>/dev/null || { echo "FAIL: the crawl ended before its kill (too small)"; cat "$out/run-1.txt"; exit 1; }
  kill -9 "$crawl_pid"
  wait "$crawl_pid" 2>/dev/null || true
  crawl_pid=""
  sleep 0.3  # let the test web read what the dead process had sent
  kill_us=$(now_us)
  echo "--- crawler SIGKILLed at $(( $(date +%s) - start )) s, restarted"
  echo "$kill_us" >> "$out/restarts.txt"
  crawl --summary-json "$out/summary.json" --admin 127.0.0.1:0 > "$out/run-2.txt" 2>&1 &
  crawl_pid=$!
  # The outage shows in the admin API's /metrics and /status.
  admin=""
  for _ in $(seq 1 100); do
    admin=$(grep -o "admin API listening on http://[0-9.]*:[0-9]*" "$out/run-2.txt" | sed 's/.*on //' | head -1 || true)
    [ -n "$admin" ] && break
    sleep 0.05
  done
  [ -n "$admin" ] || { echo "FAIL: no admin API"; tail -20 "$out/run-2.txt"; exit 1; }
  ok=0
  for _ in $(seq 1 40); do
    curl -sf "$admin/metrics" > "$out/metrics.txt" || true
    if grep -q "^harvest_metadata_database_up 0" "$out/metrics.txt" &&
       awk '/^harvest_metadata_outage_seconds / { exit !($2 > 0) }' "$out/metrics.txt"; then
      ok=1; break
    fi
    sleep 0.1
  done
  [ "$ok" = 1 ] || { echo "FAIL: /metrics does not show the outage"; grep harvest_metadata "$out/metrics.txt"; exit 1; }
  grep -E "^harvest_metadata_(database_up|outage_seconds)" "$out/metrics.txt" | tr '\n' ' '; echo
  status_metadata() {  # prints /status's metadata object; fails unless `$1` holds of it (m)
    curl -sf "$admin/status" | python3 -c "import json, sys
m = json.load(sys.stdin).get('metadata')
print(json.dumps(m, sort_keys=True))
sys.exit(0 if m is not None and ($1) else 1)"
  }
  status_metadata "not m['database_up'] and m['outage_seconds'] > 0 and m['last_error'] != ''" \
    > "$out/status.txt" || { echo "FAIL: /status does not show the outage"; cat "$out/status.txt"; exit 1; }
  echo "/status during the outage: $(cat "$out/status.txt")"
  # The rest of the 10 s outage, with the new process crawling meanwhile.
  sleep "$(python3 -c "import time; print(max(0.0, 10 - (time.time() - $db_stop)))")"
  kill -0 "$crawl_pid" 2>/dev/null || { echo "FAIL: the crawl ended during the outage (too small)"; cat "$out/run-2.txt"; exit 1; }
  bash "$root/scripts/pg-local" restart "$out/pg"
  echo "--- database restarted at $(( $(date +%s) - start )) s"
  for _ in $(seq 1 100); do
    curl -sf "$admin/metrics" > "$out/metrics.txt" || true
    grep -q "^harvest_metadata_database_up 1" "$out/metrics.txt" && break
    sleep 0.1
  done
  grep -q "^harvest_metadata_database_up 1" "$out/metrics.txt" ||
    { echo "FAIL: /metrics does not show the database back"; grep harvest_metadata "$out/metrics.txt"; exit 1; }
  status_metadata "m['database_up'] and m['outage_seconds'] == 0" > "$out/status.txt" ||
    { echo "FAIL: /status does not show the database back"; cat "$out/status.txt"; exit 1; }
  echo "/status after the outage: $(cat "$out/status.txt")"
  grep -E "^harvest_metadata_(database_up|rows_written_total|failures_total)" "$out/metrics.txt" | tr '\n' ' '; echo
  rc=0
  wait "$crawl_pid" || rc=$?
  crawl_pid=""
  final="$out/run-2.txt"
  grep -q "metadata: database unavailable" "$out/run-1.txt" "$out/run-2.txt" ||
    { echo "FAIL: the outage was not reported"; tail -20 "$out/run-2.txt"; exit 1; }
  grep -h "metadata: database" "$out/run-1.txt" "$out/run-2.txt" | sed 's/^.*\] //' | head -4
else
  rc=0
  (crawl --summary-json "$out/summary.json") > "$out/run-1.txt" 2>&1 || rc=$?
  final="$out/run-1.txt"
fi
echo "crawl took $(( $(date +%s) - start )) s"
if [ "$rc" != 0 ]; then echo "FAIL: the crawl exited $rc"; tail -30 "$final"; exit 1; fi
grep -q "crawl complete" "$final" || { echo "FAIL: the crawl did not complete"; tail -30 "$final"; exit 1; }
[ "$mode" = workers ] || grep "^metadata:" "$final"
kill -TERM "$web_pid"; wait "$web_pid" || true; web_pid=""

echo "--- audit"
audit_log="$out/requests.jsonl"
if [ "$mode" = basic ]; then
  # The audit does not know the crawler's timeout: /edge/slow answered (200) after the
  # crawler had given up, so asking again looks like a duplicate to it. Its requests are
  # left out of the audit; metadata_check.py below matches them to their rows.
  grep -v '"host":"hostile.test","path":"/edge/slow"' "$out/requests.jsonl" > "$out/audit-requests.jsonl"
  audit_log="$out/audit-requests.jsonl"
fi
"$bin" audit --log "$audit_log" --manifest "$out/manifest.json" --delay-ms "$delay" \
  --restarts "$out/restarts.txt" > "$out/audit.txt" || { cat "$out/audit.txt"; echo "FAIL: audit"; exit 1; }
head -3 "$out/audit.txt"

echo "--- rows against the request log and the CDXJ"
outs=()
for d in "${dirs[@]}"; do outs+=(--out "$d"); done
python3 "$here/metadata_check.py" --bin "$bin" "${outs[@]}" --log "$out/requests.jsonl" \
  --url "$url" --kill-us "$kill_us"
if [ "$mode" = workers ]; then
  psql "$url" -qAtc "SELECT worker, count(*) FROM pages GROUP BY worker ORDER BY worker" | tr '\n' ' '
  echo
  [ "$(psql "$url" -qAtc "SELECT count(DISTINCT worker) FROM pages")" = 3 ] ||
    { echo "FAIL: not every worker wrote rows"; exit 1; }
  echo "e2e metadata (workers, $hosts hosts x $pages pages): all checks passed"
  exit 0
fi

if [ "$mode" = basic ]; then
  # /edge/slow timed out: its requests' rows have no status.
  slow=$(psql "$url" -qAtc "SELECT count(*) FROM pages WHERE url LIKE '%/edge/slow' AND status IS NULL")
  echo "rows without a status for /edge/slow: $slow"
  [ "$slow" -ge 1 ] || { echo "FAIL: /edge/slow did not time out (no row without a status)"; exit 1; }
fi

echo "--- export"
psql "$url" -qAtc "CREATE DATABASE harvest_export"
url2="${url%/*}/harvest_export"
"$bin" metadata export --out "$out/crawl" --to "$url2"
"$bin" metadata export --out "$out/crawl" --to "$url" | tee "$out/export-again.txt"
grep -q "^exported 0 rows" "$out/export-again.txt" || { echo "FAIL: export into the crawl's database added rows"; exit 1; }
# Every column, fetched_at to the microsecond included: the rows written while the crawl ran
# (from its page records) are the rows an export writes from its state.
q="SELECT fetch_key, url, host, status, fetched_at, digest, outlinks, outcome, reason FROM pages ORDER BY fetch_key"
psql "$url" -qAtc "$q" > "$out/rows-live.txt"
psql "$url2" -qAtc "$q" > "$out/rows-export.txt"
if ! cmp -s "$out/rows-live.txt" "$out/rows-export.txt"; then
  diff "$out/rows-live.txt" "$out/rows-export.txt" | head -10
  echo "FAIL: the export's rows differ from the crawl's"
  exit 1
fi
echo "export: $(wc -l < "$out/rows-export.txt") rows, identical to the crawl's"
echo "e2e metadata ($mode, $hosts hosts x $pages pages): all checks passed"

#!/usr/bin/env bash
# Fault test (docs/architecture.md §7): crawl the test web while killing the crawler with SIGKILL
# at KILLS random moments, restarting it each time with the same command; then let it finish.
# The end state must equal an uninterrupted crawl's:
#  - audit of the whole request log across restarts: 0 concurrency, delay, robots and
#    duplicate-fetch violations, 100% coverage (a page fetched again right after a kill,
#    because it was not yet durable, is counted as a refetch, not a duplicate: --restarts);
#  - every WARC valid under warcio; every response/revisit record indexed in the CDXJ;
#  - every URL's response stored exactly once as a full record; every URL the crawler
#    requested has a capture (nothing lost); at least one kill landed while records were
#    written but not yet committed (the restart found unindexed records or a torn tail).
# FAULT_TLS=1: over HTTPS — the test web serves https (HTTP/2) with https:// seeds, pages
# linking http:// and a 301 to https:// for every plain-HTTP request; the crawl trusts its CA.
# Usage: fault_test.sh HARVEST_BIN HOSTS PAGES KILLS [SEED]
set -euo pipefail
bin="$1" hosts="$2" pages="$3" kills="$4" seed="${5:-$RANDOM}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$(mktemp -d /tmp/harvest-fault.XXXXXX)"
web_pid="" crawl_pid=""
cleanup() {
  [ -n "$crawl_pid" ] && kill -9 "$crawl_pid" 2>/dev/null
  [ -n "$web_pid" ] && kill "$web_pid" 2>/dev/null
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $out"; else rm -rf "$out"; fi
}
trap cleanup EXIT
delay=200
web_tls=() crawl_tls=()
if [ "${FAULT_TLS:-0}" = 1 ]; then
  web_tls=(--tls --tls-dir "$out/tls" --http-redirect)
  crawl_tls=(--ca-file "$out/tls/ca.pem")
fi
echo "fault test: $hosts hosts x $pages pages, $kills kills${FAULT_TLS:+ (FAULT_TLS=$FAULT_TLS)}, random seed $seed (rerun: $0 $* with SEED=$seed)"
RANDOM=$seed

"$bin" testweb --listen 127.0.0.1:0 --hosts "$hosts" --pages "$pages" ${FAULT_TESTWEB_FLAGS:-} \
  --seeds "$out/seeds.txt" --log "$out/requests.jsonl" --manifest "$out/manifest.json" \
  "${web_tls[@]}" > "$out/web.txt" 2>&1 &
web_pid=$!
for _ in $(seq 1 200); do grep -q "listening on" "$out/web.txt" && break; sleep 0.05; done
port=$(grep -o "listening on [0-9.]*:[0-9]*" "$out/web.txt" | sed 's/.*://')
for _ in $(seq 1 100); do [ -s "$out/seeds.txt" ] && break; sleep 0.05; done

crawl() {  # the same command every time: it resumes the crawl in $out/crawl
  exec "$bin" crawl --seeds "$out/seeds.txt" --out "$out/crawl" --config "$root/scripts/testweb-crawl.toml" \
    --delay-ms "$delay" --connect-to "::127.0.0.1:$port" --allow-address 127.0.0.0/8 --per-ip-limit 0 --no-progress --workers 2 "${crawl_tls[@]}" "$@"
}
now_us() { date +%s%6N; }

: > "$out/restarts.txt"
# restarts.txt: when each restarted process was launched (after the previous one died), so
# every request the test web logs before it belongs to an earlier process — including the
# ones a killed crawler had sent and the server only read after the kill.
for i in $(seq 1 "$kills"); do
  [ "$i" -gt 1 ] && now_us >> "$out/restarts.txt"
  crawl > "$out/run-$i.txt" 2>&1 &
  crawl_pid=$!
  # A random moment 1-4 s into the run (the crawl writes WARC records continuously).
  sleep "$(( 1 + RANDOM % 3 )).$(( RANDOM % 10 ))"
  if ! kill -0 "$crawl_pid" 2>/dev/null; then
    echo "FAIL: run $i ended before its kill (crawl too small for $kills kills?)"
    cat "$out/run-$i.txt"; exit 1
  fi
  kill -9 "$crawl_pid"
  wait "$crawl_pid" 2>/dev/null || true
  crawl_pid=""
  sleep 0.3  # let the test web read what the dead process had sent
  if [ "$i" = 2 ]; then
    # A kill in the middle of an append leaves half a gzip member at the end of the WARC;
    # a random SIGKILL rarely lands inside one write(2), so this kill's tail is torn on
    # purpose (half of a record, as an interrupted write leaves it).
    python3 "$here/tear_warc_tail.py" "$out/crawl"
  fi
  echo "run $i: killed (SIGKILL) after $(grep -c . "$out/crawl/outcomes.jsonl" 2>/dev/null || echo 0) outcome lines"
done

echo "--- final run"
now_us >> "$out/restarts.txt"
rc=0
(crawl --summary-json "$out/summary.json") > "$out/final.txt" 2>&1 || rc=$?
if [ "$rc" != 0 ]; then echo "FAIL: final run exited $rc"; tail -30 "$out/final.txt"; exit 1; fi
grep -q "crawl complete" "$out/final.txt" || { echo "FAIL: final run did not complete"; cat "$out/final.txt"; exit 1; }
kill -TERM "$web_pid"; wait "$web_pid" || true; web_pid=""
grep -h "resuming the crawl\|recovery:" "$out"/run-*.txt "$out/final.txt" | sed 's/^.*\] //' || true

echo "--- audit across restarts"
"$bin" audit --log "$out/requests.jsonl" --manifest "$out/manifest.json" --delay-ms "$delay" \
  --restarts "$out/restarts.txt" > "$out/audit.txt" || { cat "$out/audit.txt"; echo "FAIL: audit"; exit 1; }
head -12 "$out/audit.txt"
echo "--- warcio"
node "$here/warcio_verify.js" --quiet "$out/crawl"
echo "--- stored once, nothing lost"
python3 "$here/check_fault.py" --bin "$bin" --out "$out" --kills "$kills"
echo "fault test passed ($kills kills, seed $seed)"

#!/usr/bin/env bash
# A continuous crawl shared over a Redis Cluster (docs/distributed.md, docs/freshness.md): the
# test starts its own 3-master cluster and a test web whose changing pages get a new edition
# every 10 s. Workers w1 and w2 crawl it with --recrawl --refresh-window 15s --stop-after 50s;
# w3 joins 20 s in (--stop-after 30s) and takes its share of the partitions, with their
# recrawl schedules and the records of the last fetches. Checks:
#  - every worker exits 0 (--stop-after is a clean stop);
#  - the audit over the merged request log with --refresh-window 15s: 0 concurrency, delay,
#    robots, within-window and duplicate violations; every page fetched at least twice;
#    conditional requests sent and answered 304;
#  - w3 sent conditional requests: the validators of fetches it never made (another worker's)
#    came to it from the cluster;
#  - warcio reads every worker's WARC files.
# Usage: distributed_recrawl_test.sh HARVEST_BIN
set -euo pipefail
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$(mktemp -d /tmp/harvest-dist-recrawl.XXXXXX)"
web_pid=""
declare -A pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  [ -n "$web_pid" ] && kill "$web_pid" 2>/dev/null
  "$root/scripts/redis-cluster" stop "$out/redis" >/dev/null 2>&1 || true
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $out"; else rm -rf "$out"; fi
}
trap cleanup EXIT
delay=200

seeds=$("$root/scripts/redis-cluster" start "$out/redis" --masters 3 | tail -1)
echo "redis cluster: $seeds"
"$bin" testweb --listen 127.0.0.1:0 --hosts 12 --pages 8 --no-hostile --crawl-delay-percent 0 \
  --change-every 10s --change-percent 50 --seeds "$out/seeds.txt" --log "$out/requests.jsonl" \
  --manifest "$out/manifest.json" > "$out/web.txt" 2>&1 &
web_pid=$!
for _ in $(seq 1 400); do grep -q "listening on" "$out/web.txt" && break; sleep 0.05; done
addr=$(grep -o "listening on [0-9.]*:[0-9]*" "$out/web.txt" | awk '{print $3}')
[ -n "$addr" ] || { echo "the test web did not start"; cat "$out/web.txt"; exit 1; }
for _ in $(seq 1 200); do [ -s "$out/seeds.txt" ] && break; sleep 0.05; done

worker() {  # worker ID STOP_AFTER
  "$bin" crawl --seeds "$out/seeds.txt" --out "$out/$1" --delay-ms "$delay" --no-progress \
    --connect-to "::$addr" --allow-address 127.0.0.0/8 --per-ip-limit 0 --workers 1 --recrawl --refresh-window 15s \
    --stop-after "$2" --redis "redis://$seeds" --worker-id "$1" --redis-prefix recrawl \
    --lease-ttl 6s --partitions 6 --summary-json "$out/$1.summary.json" > "$out/$1.txt" 2>&1 &
  pids[$1]=$!
}
wait_exit() {  # wait_exit ID (bounded: 120 s)
  local p="${pids[$1]}"
  for _ in $(seq 1 1200); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$p" 2>/dev/null; then echo "FAIL: worker $1 still running"; tail -20 "$out/$1.txt"; exit 1; fi
  local rc=0
  wait "$p" || rc=$?
  unset "pids[$1]"
  return $rc
}

worker w1 50s
worker w2 50s
sleep 20
worker w3 30s
for w in w1 w2 w3; do
  rc=0; wait_exit "$w" || rc=$?
  if [ "$rc" != 0 ]; then echo "FAIL: worker $w exited $rc"; tail -30 "$out/$w.txt"; exit 1; fi
  grep -q '"stopped_after":true' "$out/$w.summary.json" || { echo "FAIL: $w did not stop after its time"; exit 1; }
  grep "^shared crawl:" "$out/$w.txt" || true
done
kill -TERM "$web_pid"; wait "$web_pid" 2>/dev/null || true; web_pid=""

echo "--- audit --refresh-window 15s of the merged request log"
"$bin" audit --log "$out/requests.jsonl" --manifest "$out/manifest.json" --delay-ms "$delay" \
  --refresh-window 15s --json > "$out/audit.json" || { cat "$out/audit.json"; echo "FAIL: audit"; exit 1; }
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
a = json.load(open(out + "/audit.json"))
v = a["violations"]
bad = {k: v[k] for k in ("concurrency", "delay", "robots", "within_window", "duplicate") if v.get(k)}
if bad: sys.exit(f"FAIL: audit violations: {bad}")
f = a["fetches_per_page"]
if f["min"] < 2: sys.exit(f"FAIL: a page was fetched fewer than twice: {f}")
if a["not_modified"] == 0 or a["conditional"] == 0: sys.exit("FAIL: no conditional request / 304")
print(f"audit: {a['requests']} requests, 0 violations; fetches per page min {f['min']} median "
      f"{f['median']} max {f['max']}; {a['conditional']} conditional, {a['not_modified']} answered 304")
s = {w: json.load(open(f"{out}/{w}.summary.json")) for w in ("w1", "w2", "w3")}
for w, j in s.items():
    print(f"{w}: {j['recrawls']} recrawls, {j['conditional']} conditional, {j['not_modified']} not modified")
# w3 joined after the first fetches: every conditional request it sent carried validators of
# a fetch another worker made, which only the cluster could give it.
if s["w3"]["conditional"] == 0: sys.exit("FAIL: the joining worker sent no conditional request")
PY
echo "--- warcio"
node "$here/warcio_verify.js" --quiet "$out/w1" "$out/w2" "$out/w3"
echo "distributed recrawl test passed"

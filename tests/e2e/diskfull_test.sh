#!/usr/bin/env bash
# Output errors: when the WARC output cannot be written — here a file-size limit
# (ulimit -f) makes every append past 2 MiB fail with EFBIG, as a full disk fails with
# ENOSPC — the crawl pauses with a clear message and starts no new fetches; nothing it
# could not write is taken as done: stopped (SIGTERM) and run again without the limit, the
# crawl completes with every page stored once, a clean audit and valid WARCs.
set -euo pipefail
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$(mktemp -d /tmp/harvest-diskfull.XXXXXX)"
web_pid="" crawl_pid=""
cleanup() {
  [ -n "$crawl_pid" ] && kill -9 "$crawl_pid" 2>/dev/null
  [ -n "$web_pid" ] && kill "$web_pid" 2>/dev/null
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $out"; else rm -rf "$out"; fi
}
trap cleanup EXIT
delay=100
"$bin" testweb --listen 127.0.0.1:0 --hosts 40 --pages 30 --no-hostile \
  --seeds "$out/seeds.txt" --log "$out/requests.jsonl" --manifest "$out/manifest.json" \
  > "$out/web.txt" 2>&1 &
web_pid=$!
for _ in $(seq 1 200); do grep -q "listening on" "$out/web.txt" && break; sleep 0.05; done
port=$(grep -o "listening on [0-9.]*:[0-9]*" "$out/web.txt" | sed 's/.*://')
for _ in $(seq 1 100); do [ -s "$out/seeds.txt" ] && break; sleep 0.05; done
cat > "$out/crawl.toml" <<TOML
[crawl]
output_retry_s = 1
[state]
write_buffer_mb = 1
TOML
crawl() {
  exec "$bin" crawl --seeds "$out/seeds.txt" --out "$out/crawl" --config "$out/crawl.toml" \
    --delay-ms "$delay" --connect-to "::127.0.0.1:$port" --allow-address 127.0.0.0/8 --per-ip-limit 0 --no-progress --workers 2 "$@"
}

echo "--- crawl with a 2 MiB file-size limit"
(ulimit -f 2048; crawl) > "$out/limited.txt" 2>&1 &
crawl_pid=$!
for _ in $(seq 1 300); do grep -q "crawl paused" "$out/limited.txt" && break; sleep 0.1; done
grep -q "crawl paused" "$out/limited.txt" || { echo "FAIL: no pause message"; cat "$out/limited.txt"; exit 1; }
grep -m1 "crawl paused" "$out/limited.txt" | sed 's/^.*\] //'
sleep 1  # requests already in flight end
n1=$(wc -l < "$out/requests.jsonl")
sleep 3
n2=$(wc -l < "$out/requests.jsonl")
echo "requests while paused: $((n2 - n1)) in 3 s"
[ "$n2" = "$n1" ] || { echo "FAIL: the paused crawl kept fetching ($n1 -> $n2 requests)"; exit 1; }
kill -TERM "$crawl_pid"
rc=0; wait "$crawl_pid" || rc=$?; crawl_pid=""
[ "$rc" = 3 ] || { echo "FAIL: stopped paused crawl exited $rc, expected 3"; tail -20 "$out/limited.txt"; exit 1; }
grep -q "still queued" "$out/limited.txt" || { echo "FAIL: no 'still queued' in the summary"; exit 1; }

echo "--- the same command without the limit resumes and completes"
date +%s%6N > "$out/restarts.txt"
rc=0; (crawl) > "$out/final.txt" 2>&1 || rc=$?
[ "$rc" = 0 ] || { echo "FAIL: resumed crawl exited $rc"; tail -20 "$out/final.txt"; exit 1; }
grep -q "crawl complete" "$out/final.txt" || { echo "FAIL: not complete"; cat "$out/final.txt"; exit 1; }
kill -TERM "$web_pid"; wait "$web_pid" || true; web_pid=""
"$bin" audit --log "$out/requests.jsonl" --manifest "$out/manifest.json" --delay-ms "$delay" \
  --restarts "$out/restarts.txt" > "$out/audit.txt" || { cat "$out/audit.txt"; echo "FAIL: audit"; exit 1; }
grep -E "^AUDIT|^Coverage|^Violations|^Refetched" "$out/audit.txt"
node "$here/warcio_verify.js" --quiet "$out/crawl"
python3 "$here/check_fault.py" --bin "$bin" --out "$out" --kills 0 --allow-not-stored
echo "disk-full test passed"

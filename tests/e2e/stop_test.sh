#!/usr/bin/env bash
# End-to-end: a crawl stopped early — by --max-pages, then by SIGTERM — ends cleanly: exit 0
# (page limit) or 3 (signal), the summary counts the URLs still queued, the WARC files are
# complete and valid under warcio, and the audit of what was fetched is clean. Then the same
# command resumes the SIGTERM'd crawl to completion: full coverage, a clean audit over both
# runs, every page stored once.
set -euo pipefail
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$(mktemp -d /tmp/harvest-stop.XXXXXX)"
web_pid=""
trap '[ -n "$web_pid" ] && kill "$web_pid" 2>/dev/null; rm -rf "$out"' EXIT

start_web() {  # start_web NAME: a fresh test web logging to $out/NAME.jsonl
  "$bin" testweb --listen 127.0.0.1:0 --hosts 30 --pages 30 --no-hostile \
    --seeds "$out/seeds.txt" --log "$out/$1.jsonl" --manifest "$out/manifest.json" \
    > "$out/web-$1.txt" 2>&1 &
  web_pid=$!
  for _ in $(seq 1 200); do grep -q "listening on" "$out/web-$1.txt" && break; sleep 0.05; done
  port=$(grep -o "listening on [0-9.]*:[0-9]*" "$out/web-$1.txt" | sed 's/.*://')
}
audit_web() {  # audit_web NAME DELAY: stop the test web, audit its log (coverage not required)
  kill -TERM "$web_pid"; wait "$web_pid" || true; web_pid=""
  "$bin" audit --log "$out/$1.jsonl" --manifest "$out/manifest.json" --delay-ms "$2" \
    --min-coverage 0 > "$out/audit-$1.txt" || { head -30 "$out/audit-$1.txt"; echo "FAIL: audit"; exit 1; }
  grep -E "^Violations|^Requests" "$out/audit-$1.txt"
}

start_web limit
echo "--- page limit"
rc=0
"$bin" crawl --seeds "$out/seeds.txt" --out "$out/limit" --delay-ms 100 --max-pages 40 \
  --connect-to "::127.0.0.1:$port" --allow-address 127.0.0.0/8 --per-ip-limit 0 --no-progress > "$out/limit.txt" 2>&1 || rc=$?
cat "$out/limit.txt" | grep -v "^\s*$" | head -3
[ "$rc" = 0 ] || { echo "FAIL: --max-pages crawl exited $rc"; exit 1; }
grep -q "stopped at the page limit" "$out/limit.txt" || { echo "FAIL: no page-limit summary"; exit 1; }
grep -q "URLs still queued" "$out/limit.txt" || { echo "FAIL: no 'still queued' in the summary"; exit 1; }
node "$here/warcio_verify.js" --quiet "$out/limit"
audit_web limit 100

echo "--- SIGTERM"
start_web term
"$bin" crawl --seeds "$out/seeds.txt" --out "$out/term" --delay-ms 300 \
  --connect-to "::127.0.0.1:$port" --allow-address 127.0.0.0/8 --per-ip-limit 0 --no-progress > "$out/term.txt" 2>&1 &
crawl_pid=$!
sleep 3
kill -TERM "$crawl_pid"
rc=0
wait "$crawl_pid" || rc=$?
[ "$rc" = 3 ] || { echo "FAIL: SIGTERM crawl exited $rc, expected 3"; cat "$out/term.txt"; exit 1; }

grep -q "interrupted" "$out/term.txt" || { echo "FAIL: no interrupted summary"; exit 1; }
grep -q "URLs still queued" "$out/term.txt" || { echo "FAIL: no 'still queued' in the summary"; exit 1; }
node "$here/warcio_verify.js" --quiet "$out/term"

echo "--- resume the SIGTERM'd crawl"
rc=0
"$bin" crawl --seeds "$out/seeds.txt" --out "$out/term" --delay-ms 300 \
  --connect-to "::127.0.0.1:$port" --allow-address 127.0.0.0/8 --per-ip-limit 0 --no-progress > "$out/resume.txt" 2>&1 || rc=$?
[ "$rc" = 0 ] || { echo "FAIL: resumed crawl exited $rc"; tail "$out/resume.txt"; exit 1; }
grep -q "crawl complete" "$out/resume.txt" || { echo "FAIL: resumed crawl not complete"; exit 1; }
grep -E "^  resumed:" "$out/resume.txt"
node "$here/warcio_verify.js" --quiet "$out/term"
kill -TERM "$web_pid"; wait "$web_pid" || true; web_pid=""
# A clean stop commits everything it stored: nothing is fetched twice, so no --restarts.
"$bin" audit --log "$out/term.jsonl" --manifest "$out/manifest.json" --delay-ms 300 \
  > "$out/audit-term.txt" || { head -30 "$out/audit-term.txt"; echo "FAIL: audit over both runs"; exit 1; }
grep -E "^Coverage|^Violations" "$out/audit-term.txt"
mkdir -p "$out/check"
ln -s "$out/term" "$out/check/crawl"
cp "$out/term.jsonl" "$out/check/requests.jsonl"
python3 "$here/check_fault.py" --bin "$bin" --out "$out/check" --kills 0
echo "stop tests passed"

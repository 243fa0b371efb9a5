#!/usr/bin/env bash
# End-to-end near-duplicate detection (docs/freshness.md): a test web where 10% of the pages
# are labelled near-copies of another page (manifest "near_duplicates"), crawled with a
# SIGKILL and a restart in the middle. The near-duplicate tags of the CDXJ index
# ("near_dup_of") are scored against the labels: precision and recall must both be >= 0.95
# (the index survives the restart: pages stored before the kill are still found).
# Usage: neardup_test.sh HARVEST_BIN
set -euo pipefail
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mktemp -d /tmp/harvest-neardup.XXXXXX)"
web_pid="" crawl_pid=""
cleanup() {
  [ -n "$crawl_pid" ] && kill -9 "$crawl_pid" 2>/dev/null
  [ -n "$web_pid" ] && kill "$web_pid" 2>/dev/null
  rm -rf "$out"
}
trap cleanup EXIT

"$bin" testweb --listen 127.0.0.1:0 --hosts 20 --pages 60 --no-hostile --crawl-delay-percent 0 \
  --near-dup-percent 10 --seeds "$out/seeds.txt" --log "$out/requests.jsonl" \
  --manifest "$out/manifest.json" > "$out/web.txt" 2>&1 &
web_pid=$!
for _ in $(seq 1 200); do grep -q "listening on" "$out/web.txt" 2>/dev/null && break; sleep 0.05; done
addr=$(grep -o "listening on [0-9.]*:[0-9]*" "$out/web.txt" | awk '{print $3}')
[ -n "$addr" ] || { echo "the test web did not start"; cat "$out/web.txt"; exit 1; }
for _ in $(seq 1 100); do [ -s "$out/seeds.txt" ] && break; sleep 0.05; done
crawl=("$bin" crawl --seeds "$out/seeds.txt" --out "$out/crawl" --delay-ms 100 --no-progress
       --connect-to "::$addr" --allow-address 127.0.0.0/8 --per-ip-limit 0)

# First run: killed once about a third of the pages are stored.
"${crawl[@]}" > "$out/crawl1.txt" 2>&1 &
crawl_pid=$!
for _ in $(seq 1 400); do
  n=$( (cat "$out"/crawl/*.cdxj 2>/dev/null || true) | wc -l)
  [ "$n" -ge 400 ] && break
  sleep 0.05
done
kill -9 "$crawl_pid"; wait "$crawl_pid" 2>/dev/null || true; crawl_pid=""
echo "killed after $(cat "$out"/crawl/*.cdxj | wc -l) index lines"
date +%s%6N > "$out/restarts.txt"
"${crawl[@]}" > "$out/crawl2.txt" 2> "$out/crawl2-stderr.txt" || {
  echo "resumed crawl failed"; tail -20 "$out/crawl2-stderr.txt"; exit 1; }
grep -q "near-duplicate index: [0-9]* fingerprints restored" "$out/crawl2-stderr.txt" || {
  echo "the restart did not restore the near-duplicate index"; exit 1; }
kill -TERM "$web_pid"; wait "$web_pid" 2>/dev/null || true; web_pid=""
"$bin" audit --log "$out/requests.jsonl" --manifest "$out/manifest.json" --delay-ms 100 \
  --restarts "$out/restarts.txt" > "$out/audit.txt" || { cat "$out/audit.txt"; exit 1; }

python3 - "$out/crawl" "$out/manifest.json" "$out/requests.jsonl" <<'PY'
import glob, json, sys
crawl, manifest = sys.argv[1], json.load(open(sys.argv[2]))
# The page each URL names, from the test web's log; a page's query variants (?print=1,
# reordered parameters) carry its content, so they belong to its group.
page_of = {}
for line in open(sys.argv[3]):
    r = json.loads(line)
    if r.get("page"): page_of["http://" + r["host"] + r["path"]] = r["page"].split("?")[0]
groups = manifest.get("near_duplicates") or []
if len(groups) < 20: sys.exit(f"the manifest labels only {len(groups)} near-duplicate groups")
group_of = {}
for i, g in enumerate(groups):
    for ident in g: group_of[ident] = i
def ident(url):
    return page_of.get(url, url)
detections = {}  # page identity -> identity it nearly duplicates
for path in glob.glob(crawl + "/*.cdxj"):
    for line in open(path):
        j = json.loads(line[line.index("{"):])
        if "near_dup_of" in j and j.get("mime") != "warc/revisit":
            a, b = ident(j["url"]), ident(j["near_dup_of"])
            if a != b: detections[a] = b
tp = sum(1 for a, b in detections.items() if a in group_of and group_of.get(b) == group_of[a])
precision = tp / len(detections) if detections else 0.0
expected = sum(len(g) - 1 for g in groups)
found = {a for a, b in detections.items() if a in group_of and group_of.get(b) == group_of[a]}
recall = len(found) / expected if expected else 0.0
wrong = [(a, b) for a, b in detections.items() if not (a in group_of and group_of.get(b) == group_of[a])]
print(f"near-duplicates: {len(groups)} labelled groups ({expected} copies), {len(detections)} "
      f"detections, {tp} correct: precision {precision:.3f}, recall {recall:.3f}")
for a, b in wrong[:5]: print(f"  false positive: {a} ~ {b}")
if precision < 0.95 or recall < 0.95: sys.exit("precision or recall below 0.95")
PY
echo "e2e near-duplicates: all checks passed"

#!/usr/bin/env bash
# End-to-end: budgets throttle, never drop (docs/admission.md "Budgets").
#  1. The big site (`harvest testweb --big-site 20000`: a sitemap index of 4 x 5,000 articles
#     named in robots.txt, 40 archive pages of 500 links, 5 links per article) beside a few
#     normal hosts, at --delay-ms 1 with the default budgets: the discovery ratio defers most
#     of its URLs, and still every article and archive page is fetched (the audit's 100%
#     coverage, 0 violations), nothing is left deferred and every deferral was admitted.
#  2. The session-id trap host (`--trap-host`: every page links new unique URLs forever)
#     beside the hostile hosts and a few normal ones, with small budgets (daily quota 300,
#     ratio 2 after 100 admissions, backlog cap 200) and --stop-after: its requests stay
#     within the quota, its backlog within the cap (the rest refused as trap-backlog-cap),
#     and the rest of the crawl is unaffected (100% coverage, 0 violations, calendar traps
#     at most 200 requests).
# Usage: bigsite_test.sh HARVEST_BIN [ARTICLES (default 20000)]
set -euo pipefail
bin="$1" articles="${2:-20000}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$(mktemp -d /tmp/harvest-e2e-bigsite.XXXXXX)"
trap 'rm -rf "$out"' EXIT

echo "--- 1. the big site ($articles articles), default budgets"
TESTWEB_FLAGS="--big-site $articles --no-hostile" "$root/scripts/crawl-testweb" \
  --harvest "$bin" --hosts 10 --pages 10 --delay-ms 1 --out "$out/big" -- --no-progress
python3 - "$out/big" "$articles" <<'PY'
import json, sys
out, articles = sys.argv[1], int(sys.argv[2])
s = json.load(open(out + "/summary.json"))
def fail(msg):
    print("bigsite_test: " + msg, file=sys.stderr)
    sys.exit(1)
if not s["complete"]:
    fail("the crawl did not complete")
if s["deferred"] < articles // 2:
    fail(f"only {s['deferred']} URLs deferred: the discovery ratio should have throttled the big site")
if s["released"] != s["deferred"] or s["deferred_waiting"] != 0:
    fail(f"deferred {s['deferred']}, released {s['released']}, still waiting {s['deferred_waiting']}")
if s["backlog_refused"] != 0:
    fail(f"{s['backlog_refused']} URLs refused by the backlog cap on a legitimate site")
refused = [json.loads(l) for l in open(out + "/crawl/outcomes.jsonl")]
refused = [o for o in refused if o["outcome"].startswith("trap-") and "big.test" in o["url"]]
if refused:
    fail(f"{len(refused)} big.test URLs refused as traps, e.g. {refused[0]}")
print(f"big site: {s['deferred']} URLs deferred, all {s['released']} admitted later, "
      f"{s['hosts_deferred']} host(s) throttled, none left waiting")
PY

echo "--- 2. the session-id trap host beside the hostile web, small budgets"
cat "$root/scripts/testweb-crawl.toml" > "$out/trap.toml"
cat >> "$out/trap.toml" <<'TOML'

[traps]
host_daily_quota = 300
max_discovery_ratio = 2
discovery_ratio_after = 100
max_backlog = 200
TOML
TESTWEB_FLAGS="--trap-host" "$root/scripts/crawl-testweb" --harvest "$bin" --hosts 10 \
  --pages 10 --delay-ms 1 --out "$out/trap" --config "$out/trap.toml" \
  -- --no-progress --stop-after 60s
"$bin" audit --log "$out/trap/testweb/requests.jsonl" --manifest "$out/trap/testweb/manifest.json" \
  --delay-ms 1 --json > "$out/trap/audit.json" || true
python3 - "$out/trap" <<'PY'
import json, sys
out = sys.argv[1]
def fail(msg):
    print("bigsite_test: " + msg, file=sys.stderr)
    sys.exit(1)
a = json.load(open(out + "/audit.json"))
traps = {t["host"]: t for t in a.get("trap_hosts", [])}
if "sessions.test" not in traps:
    fail(f"the audit reports no trap host sessions.test: {a.get('trap_hosts')}")
t = traps["sessions.test"]
if t["max_requests_per_utc_day"] > 300:
    fail(f"sessions.test drew {t['max_requests_per_utc_day']} requests in a UTC day (quota 300)")
if t["requests"] < 250:
    fail(f"sessions.test drew only {t['requests']} requests: the trap was not crawled to its quota")
s = json.load(open(out + "/summary.json"))
if s["backlog_refused"] == 0:
    fail("no URL refused by the backlog cap: the trap's backlog was not bounded by it")
if s["deferred_waiting"] > 200:
    fail(f"{s['deferred_waiting']} URLs waiting on disk, above the backlog cap of 200")
caps = [json.loads(l) for l in open(out + "/crawl/outcomes.jsonl")]
caps = [o for o in caps if o["outcome"] == "trap-backlog-cap"]
if not caps or any("sessions.test" not in o["url"] for o in caps):
    fail("trap-backlog-cap outcomes missing, or recorded for another host than sessions.test")
if "is full" not in caps[0].get("detail", ""):
    fail(f"a trap-backlog-cap outcome without its reason: {caps[0]}")
print(f"trap host: {t['requests']} requests (quota 300), {s['deferred_waiting']} URLs waiting "
      f"(cap 200), {s['backlog_refused']} refused as trap-backlog-cap")
PY
python3 "$here/check_crawl.py" --bin "$bin" --out "$out/trap" --hosts 10 --pages 10 \
  --testweb-flag=--trap-host
echo "e2e big site and trap host: all checks passed"

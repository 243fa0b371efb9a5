#!/usr/bin/env bash
# End-to-end: per-IP politeness with the crawl's default limits (docs/politeness.md "DNS and
# per-IP limits"). The test web serves HOSTS hosts on 20 loopback addresses and writes a
# resolve file spreading them round-robin; the crawl pins them with --resolve-file (no DNS,
# no --connect-to) and runs with the default per-IP cap of 10 requests in flight per address.
# Required: the audit finds 0 per-host and 0 per-IP violations and 100% coverage
# (scripts/crawl-testweb exits non-zero otherwise) and every address was reached. (The test
# web answers in microseconds, so its log rarely shows many requests overlapping at one
# address; crawler_dns_test shows in-process that the cap binds and that the same crawl
# without it exceeds it.)
# Usage: perip_test.sh HARVEST_BIN [HOSTS (1000)] [PAGES (5)]
set -euo pipefail
bin="$1" hosts="${2:-1000}" pages="${3:-5}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$(mktemp -d /tmp/harvest-e2e-perip.XXXXXX)"
trap 'rm -rf "$out"' EXIT

"$root/scripts/crawl-testweb" --harvest "$bin" --hosts "$hosts" --pages "$pages" \
  --addresses 20 --per-ip-limit 10 --delay-ms 200 --out "$out" -- --no-progress --workers 2
echo "--- per-IP figures"
"$bin" audit --log "$out/testweb/requests.jsonl" --manifest "$out/testweb/manifest.json" \
  --delay-ms 200 --per-ip-limit 10 --json > "$out/audit.json" || true
python3 - "$out/audit.json" "$out/testweb/resolve.txt" "$out/crawl-stderr.txt" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
per_ip = report["per_ip"]
assert per_ip["available"], "the request log has no ip field"
assert per_ip["address_count"] == 20, f"requests reached {per_ip['address_count']} addresses, not 20"
assert per_ip["requests_without_ip"] == 0, per_ip["requests_without_ip"]
v = report["violations"]
for kind in ("per_ip_concurrency", "per_ip_gap", "concurrency", "delay", "robots", "duplicate"):
    n = v.get(kind, 0)
    assert n == 0, f"{n} {kind} violations"
assert per_ip["max_in_flight"] <= 10, per_ip["max_in_flight"]
hosts_per_address = {}
for line in open(sys.argv[2]):
    if line.strip() and not line.startswith("#"):
        host, address = line.split()
        hosts_per_address.setdefault(address, 0)
        hosts_per_address[address] += 1
assert len(hosts_per_address) == 20, hosts_per_address
for a in per_ip["addresses"]:
    assert a["requests"] > 0, a
print(f"per-IP: {per_ip['address_count']} addresses, at most {per_ip['max_in_flight']} in flight "
      f"on one (at {per_ip['max_in_flight_ip']}), 0 per-IP violations")
PY
echo "e2e per-IP ($hosts hosts x $pages pages on 20 addresses): all checks passed"

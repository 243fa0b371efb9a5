#!/usr/bin/env bash
# End-to-end: --scope keeps a crawl on its seeds' hosts.
# A test web of 20 hosts x 10 pages; ONE seed host. Each crawl gets a fresh test web, so
# its request log (requests.jsonl, field host) holds exactly what that crawl requested.
#  - --scope any (capped by --max-pages) reaches other hosts: the seed's pages do link
#    elsewhere, so the scoped crawls below prove something;
#  - --scope host: nothing requested from any other host, every tree page of the seed host
#    fetched, and a clean audit (0 violations);
#  - --scope site: everything requested within the seed's registrable domain, every tree
#    page of the seed host fetched, clean audit. The test web names its hosts hNNNN.test and
#    ".test" is not in the Public Suffix List (the default rule makes "test" the suffix), so
#    every host is its own registrable domain: here the site scope must request exactly the
#    host scope's set of hosts, i.e. the seed host alone.
set -euo pipefail
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mktemp -d /tmp/harvest-scope.XXXXXX)"
web_pid=""
cleanup() {
  [ -n "$web_pid" ] && kill "$web_pid" 2>/dev/null
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $out"; else rm -rf "$out"; fi
}
trap cleanup EXIT
hosts=20 pages=10 delay=20

start_web() {  # start_web NAME: a fresh test web logging to $out/NAME.jsonl
  "$bin" testweb --listen 127.0.0.1:0 --hosts "$hosts" --pages "$pages" --no-hostile \
    --seeds "$out/all-seeds.txt" --log "$out/$1.jsonl" --manifest "$out/manifest.json" \
    > "$out/web-$1.txt" 2>&1 &
  web_pid=$!
  for _ in $(seq 1 200); do grep -qs "listening on" "$out/web-$1.txt" && break; sleep 0.05; done
  port=$(grep -o "listening on [0-9.]*:[0-9]*" "$out/web-$1.txt" | sed 's/.*://')
  [ -n "$port" ] || { echo "FAIL: the test web did not start"; cat "$out/web-$1.txt"; exit 1; }
}
stop_web() {  # stop_web: stop the test web (its log is flushed at exit)
  kill -TERM "$web_pid"; wait "$web_pid" || true; web_pid=""
}
crawl() {  # crawl NAME FLAGS...: crawl from the one seed into $out/NAME
  local name="$1"; shift
  local rc=0
  "$bin" crawl --seeds "$out/seed.txt" --out "$out/$name" --delay-ms "$delay" \
    --connect-to "::127.0.0.1:$port" --allow-address 127.0.0.0/8 --per-ip-limit 0 --no-progress --workers 2 "$@" > "$out/$name.txt" 2>&1 || rc=$?
  [ "$rc" = 0 ] || { echo "FAIL: crawl $name exited $rc"; tail -20 "$out/$name.txt"; exit 1; }
  grep -E "^  seeds|^  requests" "$out/$name.txt" | sed "s/^/  $name:/"
}
audit() {  # audit NAME: 0 violations in NAME's request log (coverage of the whole web not required)
  "$bin" audit --log "$out/$1.jsonl" --manifest "$out/manifest.json" --delay-ms "$delay" \
    --min-coverage 0 > "$out/audit-$1.txt" || { head -30 "$out/audit-$1.txt"; echo "FAIL: audit of $1"; exit 1; }
  grep -E "^Violations" "$out/audit-$1.txt" | sed "s/^/  $1: /"
}
check() {  # check NAME MODE: the hosts NAME's crawl requested, judged for MODE (any|host|site)
  python3 - "$out/$1.jsonl" "$seed_host" "$2" "$pages" <<'PY'
import json, sys
log, seed, mode, pages = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

def site(host):
    # Registrable domain of a test-web host: every name is "<label>.test" and "test" is not
    # in the Public Suffix List, so the default rule "*" makes the last two labels the site.
    return ".".join(host.split(".")[-2:])

requests = [json.loads(l) for l in open(log, encoding="utf-8") if l.strip()]
by_host = {}
for r in requests:
    host = r["host"].lower().split(":")[0]
    by_host.setdefault(host, set()).add(r["path"])
others = sorted(h for h in by_host if h != seed)
tree = {"/"} | {f"/p/{i}" for i in range(1, pages)}
got = tree & by_host.get(seed, set())
print(f"  {mode}: {len(requests)} requests to {len(by_host)} hosts; "
      f"seed host {seed}: {len(got)} of {len(tree)} tree pages")
if mode == "any":
    if not others:
        sys.exit("FAIL: the --scope any crawl reached no other host: the seed's pages do not "
                 "link elsewhere and the scoped crawls prove nothing")
    sys.exit(0)
if not got:
    sys.exit(f"FAIL: --scope {mode} fetched no page of the seed host {seed}")
if got != tree:
    sys.exit(f"FAIL: --scope {mode} missed tree pages of the seed host: {sorted(tree - got)}")
if mode == "host" and others:
    sys.exit(f"FAIL: --scope host requested other hosts: {others[:10]}")
if mode == "site":
    outside = sorted(h for h in by_host if site(h) != site(seed))
    if outside:
        sys.exit(f"FAIL: --scope site requested hosts outside {site(seed)}: {outside[:10]}")
    # Every test-web host is its own site (above): the site scope is the host scope here.
    if others:
        sys.exit(f"FAIL: --scope site requested other hosts of the test web: {others[:10]}")
PY
}

start_web any
seed_host=$(sed -n 4p "$out/all-seeds.txt" | sed -E 's#^https?://([^/:]+).*#\1#')
[ -n "$seed_host" ] || { echo "FAIL: no seed host in the test web's seeds"; exit 1; }
echo "http://$seed_host/" > "$out/seed.txt"
echo "test web: $hosts hosts x $pages pages; seed http://$seed_host/"

echo "--- --scope any (at most 60 pages): the seed's pages link to other hosts"
crawl any --scope any --max-pages 60
stop_web
check any any

echo "--- --scope host"
start_web host
crawl host --scope host
stop_web
check host host
audit host

echo "--- --scope site"
start_web site
crawl site --scope site
stop_web
check site site
audit site
echo "scope tests passed"

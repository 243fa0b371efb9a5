#!/usr/bin/env bash
# End-to-end: a crawl of real pages (docs/testweb.md "Real pages"). The test web serves HOSTS x
# PAGES pages made of the Python documentation's HTML (CORPUS, default
# /usr/share/doc/python3.11/html from python3-doc, which scripts/bootstrap installs), their
# links rewired to the test web; `harvest crawl` fetches it (delay 100 ms, hostile hosts off)
# and the test checks that
#  - the audit finds 0 violations and 100% coverage (scripts/crawl-testweb fails otherwise);
#  - the crawler asked for nothing but the web's pages, robots.txt and sitemaps, each answered 200: the
#    links it followed are the rewired ones, the pages' other URLs (stylesheets, scripts,
#    images, <link rel=next>, <base>) are inert or gone;
#  - every page was stored as a full response (every body is unique: no revisit), one CDXJ
#    line each;
#  - warcio reads and digest-verifies every WARC file.
# MODE tls: the same over HTTPS (crawl-testweb --tls: https:// seeds, the test web's CA, every
# plain-HTTP request answered with a 301 to https://, which the pages' absolute links to
# other hosts draw); the checks then hold for the https requests, and every http request
# must have been such a 301.
# Usage: corpus_test.sh HARVEST_BIN [HOSTS (20)] [PAGES (30)] [CORPUS_DIR] [MODE (plain|tls)]
set -euo pipefail
bin="$1" hosts="${2:-20}" pages="${3:-30}" corpus="${4:-/usr/share/doc/python3.11/html}"
mode="${5:-plain}"
tls_flags=()
case "$mode" in
  plain) ;;
  tls) tls_flags=(--tls) ;;
  *) echo "corpus_test.sh: MODE is plain or tls, not $mode" >&2; exit 2 ;;
esac
[ -d "$corpus" ] || {
  echo "corpus_test.sh: $corpus is missing (python3-doc; scripts/bootstrap installs it)" >&2
  exit 1
}
case "$corpus" in *" "*) echo "corpus_test.sh: no spaces in CORPUS_DIR, please" >&2; exit 2 ;; esac
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$(mktemp -d /tmp/harvest-e2e-corpus.XXXXXX)"
trap 'rm -rf "$out"' EXIT

TESTWEB_FLAGS="--corpus $corpus --no-hostile" "$root/scripts/crawl-testweb" --harvest "$bin" \
  --hosts "$hosts" --pages "$pages" --delay-ms 100 --out "$out" "${tls_flags[@]}" \
  -- --no-progress --workers 2
grep "^corpus:" "$out/testweb/stdout.txt"
echo "--- requests, records"
python3 - "$out" "$hosts" "$pages" "$mode" <<'PY'
import json, os, sys
out, hosts, pages, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)
requests = [json.loads(l) for l in open(os.path.join(out, "testweb", "requests.jsonl")) if l.strip()]
if mode == "tls":
    plain = [r for r in requests if r["scheme"] == "http"]
    not_redirected = [r for r in plain if r["status"] != 301]
    if not_redirected:
        fail(f"{len(not_redirected)} plain-HTTP requests not answered with a 301, e.g. "
             f'{not_redirected[0]["host"]}{not_redirected[0]["path"]} ({not_redirected[0]["status"]})')
    requests = [r for r in requests if r["scheme"] == "https"]
    print(f"plain-HTTP requests: {len(plain)}, each a 301 to https://")
bad = [r for r in requests if r["status"] != 200 or r["page"] is None]
if bad:
    fail(f"{len(bad)} requests for what the web does not have, e.g. " +
         ", ".join(f'{r["host"]}{r["path"]} ({r["status"]})' for r in bad[:5]))
kinds = {}
for r in requests:
    kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
# Sitemaps (named by robots.txt) list the same pages; the crawler may read them.
if kinds.get("page") != hosts * pages or kinds.get("robots") != hosts or set(kinds) - {"page", "robots", "sitemap"}:
    fail(f"requests by kind {kinds}, expected {hosts * pages} pages, {hosts} robots.txt and sitemaps")
page_bytes = [r["bytes"] for r in requests if r["kind"] == "page"]
print(f"requests: {len(requests)}, all 200 ({kinds['page']} pages, {kinds['robots']} robots.txt, "
      f"{kinds.get('sitemap', 0)} sitemaps); "
      f"{sum(page_bytes) / len(page_bytes) / 1024:.1f} KB per page on the wire")
crawl = os.path.join(out, "crawl")
rows = []
for name in sorted(os.listdir(crawl)):
    if name.endswith(".cdxj"):
        for line in open(os.path.join(crawl, name), encoding="utf-8"):
            parts = line.rstrip("\n").split(" ", 2)
            if len(parts) == 3:
                rows.append(json.loads(parts[2]))
pages_stored = [r for r in rows if not r["url"].endswith("/robots.txt") and "/sitemap" not in r["url"]]
if mode == "tls":  # the 301s of plain-HTTP URLs are stored too, under their http:// URLs
    pages_stored = [r for r in pages_stored if r["url"].startswith("https://")]
revisits = [r for r in pages_stored if r.get("mime") == "warc/revisit"]
if revisits:
    fail(f"{len(revisits)} pages stored as revisits (every real page's body is unique), e.g. "
         f"{revisits[0]['url']}")
urls = {r["url"] for r in pages_stored}
if len(urls) != hosts * pages or len(pages_stored) != hosts * pages:
    fail(f"{len(pages_stored)} CDXJ lines for {len(urls)} page URLs, expected {hosts * pages}")
if len({r["digest"] for r in pages_stored}) != hosts * pages:
    fail("two pages share a payload digest")
print(f"index: {len(pages_stored)} pages, each a full response with its own payload digest")
PY
echo "--- warcio"
node "$here/warcio_verify.js" "$out/crawl"
echo "e2e real-pages crawl ($mode, $hosts hosts x $pages pages of $corpus): all checks passed"

#!/usr/bin/env bash
# End-to-end: crawl the test web (HOSTS x PAGES, delay 200 ms) and check
#  - the audit: 0 concurrency, delay, robots and duplicate-fetch violations, 100% coverage;
#  - warcio (an independent reader) reads and digest-verifies every WARC file;
#  - every hostile path of the manifest has a recorded outcome; duplicates became revisits;
#  - `harvest warc get` returns pages byte-identical to what the test web serves.
# MODE https: the test web serves HTTPS (HTTP/2 by ALPN) with https:// seeds, its pages link
# http:// and every plain-HTTP request gets a 301 to https://; the audit judges politeness per
# host name across schemes and allows at most 5 http:// requests per host (and, the 301s
# being their own URLs, robots.txt once per origin). MODE https-hsts: also HSTS, and no
# http:// request after a host's first HTTPS response.
# Usage: crawl_test.sh HARVEST_BIN HOSTS PAGES [http|https|https-hsts]
set -euo pipefail
bin="$1" hosts="$2" pages="$3" mode="${4:-http}"
case "$mode" in
  http) tls=() ;;
  https) tls=(--tls) ;;
  https-hsts) tls=(--tls --hsts) ;;
  *) echo "crawl_test.sh: unknown mode $mode" >&2; exit 2 ;;
esac
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$(mktemp -d /tmp/harvest-e2e.XXXXXX)"
trap 'rm -rf "$out"' EXIT

"$root/scripts/crawl-testweb" --harvest "$bin" --hosts "$hosts" --pages "$pages" \
  --delay-ms 200 --out "$out" "${tls[@]}" -- --no-progress --workers 2
echo "--- warcio"
node "$here/warcio_verify.js" "$out/crawl"
echo "--- outcomes, revisits, warc get"
python3 "$here/check_crawl.py" --bin "$bin" --out "$out" --hosts "$hosts" --pages "$pages"
echo "e2e crawl ($hosts hosts x $pages pages, $mode): all checks passed"

#!/usr/bin/env bash
# `harvest warc index DIR [--out FILE]`: merges a crawl's sorted CDXJ files into one index
# that `LC_ALL=C sort -c` accepts and that equals `LC_ALL=C sort` of all lines; clear errors
# (exit 1) for a missing directory, a directory without CDXJ files and an unsorted input
# (naming the file and line), with nothing written to --out.
set -uo pipefail
bin="$1"
fail=0
tmp="$(mktemp -d /tmp/harvest-warc-index.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C

check() {  # check CODE PATTERN -- command...: exit code and a line of stdout+stderr
  local code="$1" pattern="$2"; shift 3
  local output rc
  output="$("$@" 2>&1)"; rc=$?
  if [ "$rc" != "$code" ] || ! grep -qE -- "$pattern" <<<"$output"; then
    echo "FAIL: '$*' exited $rc (expected $code) or its output lacks /$pattern/:"
    echo "$output" | head -5; fail=1; return
  fi
  echo "ok: $*"
}

line() {  # line SURT TS FILE OFFSET
  printf '%s %s {"url":"http://x/","mime":"text/html","status":"200","length":10,"offset":%s,"filename":"%s"}\n' \
    "$1" "$2" "$4" "$3"
}

crawl="$tmp/crawl"
mkdir -p "$crawl"
{
  line "com,example)/" 20260101000000 a.warc.gz 10
  line "com,example)/b" 20260101000002 a.warc.gz 30
  line "org,example)/z" 20260101000001 a.warc.gz 20
} > "$crawl/a.cdxj"
{
  line "com,example)/" 20260101000000 b.warc.gz 5
  line "com,example)/a" 20260101000009 b.warc.gz 40
  line "net,example)/" 20260101000003 b.warc.gz 50
  line $'org,example)/\xc3\xa9' 20260101000004 b.warc.gz 60
} > "$crawl/b.cdxj"
: > "$crawl/c.cdxj"  # an empty index (a WARC with no capture)
echo "not an index" > "$crawl/outcomes.jsonl"

# stdout: sorted, all lines, the same as sort(1) of everything.
"$bin" warc index "$crawl" > "$tmp/index.cdxj"; rc=$?
if [ "$rc" != 0 ]; then echo "FAIL: warc index exited $rc"; fail=1; fi
if ! sort -c "$tmp/index.cdxj"; then echo "FAIL: merged index is not sorted"; fail=1; fi
if ! cmp -s "$tmp/index.cdxj" <(cat "$crawl"/*.cdxj | sort); then
  echo "FAIL: merged index differs from sort of all lines"; diff "$tmp/index.cdxj" <(cat "$crawl"/*.cdxj | sort) | head; fail=1
else
  echo "ok: warc index DIR equals LC_ALL=C sort of all lines ($(wc -l < "$tmp/index.cdxj") lines)"
fi

# --out: written atomically; an index inside the crawl directory is not read back as input.
check 0 "7 lines from 3 CDXJ files" -- "$bin" warc index "$crawl" --out "$crawl/all.cdxj"
check 0 "7 lines from 3 CDXJ files" -- "$bin" warc index "$crawl" --out "$crawl/all.cdxj"
if ! cmp -s "$crawl/all.cdxj" "$tmp/index.cdxj"; then echo "FAIL: --out differs from stdout"; fail=1; fi
rm -f "$crawl/all.cdxj"
# One CDXJ file is an input of its own.
check 0 "^com,example\)/ 20260101000000" -- "$bin" warc index "$crawl/a.cdxj"

# Errors.
check 1 "missing: no such file or directory" -- "$bin" warc index "$tmp/missing"
mkdir -p "$tmp/empty"
check 1 "empty: no CDXJ files" -- "$bin" warc index "$tmp/empty"
cp "$crawl/a.cdxj" "$tmp/unsorted.cdxj"
line "com,example)/0" 20260101000000 a.warc.gz 1 >> "$tmp/unsorted.cdxj"
cp "$tmp/unsorted.cdxj" "$crawl/d.cdxj"
check 1 "d.cdxj:4: not sorted" -- "$bin" warc index "$crawl" --out "$tmp/never.cdxj"
if [ -e "$tmp/never.cdxj" ] || [ -e "$tmp/never.cdxj.tmp" ]; then
  echo "FAIL: an unsorted input left an output file"; fail=1
fi
check 2 "DIR is required" -- "$bin" warc index
exit $fail

#!/usr/bin/env bash
# End-to-end checks of the command line: help, version, usage errors (exit 2 with a hint),
# bad seed and config lines reported with their line numbers.
set -uo pipefail
bin="$1"
fail=0
tmp="$(mktemp -d /tmp/harvest-cli.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT

expect() {  # expect CODE PATTERN -- command...
  local code="$1" pattern="$2"; shift 3
  local output rc
  output="$("$@" 2>&1)"; rc=$?
  if [ "$rc" != "$code" ]; then
    echo "FAIL: '$*' exited $rc, expected $code"; echo "$output" | head -5; fail=1; return
  fi
  if ! grep -qE -- "$pattern" <<<"$output"; then
    echo "FAIL: '$*' output lacks /$pattern/:"; echo "$output" | head -5; fail=1; return
  fi
  echo "ok: $*"
}

expect 0 "^harvest [0-9]+\.[0-9]+" -- "$bin" --version
expect 0 "crawl" -- "$bin" --help
for sub in crawl testweb audit url robots warc; do
  expect 0 "Usage" -- "$bin" "$sub" --help
done
expect 2 "help" -- "$bin" no-such-command
expect 2 "help" -- "$bin" crawl --no-such-flag
expect 2 "help" -- "$bin" crawl
printf 'http://ok.test/\nnot a url\n' > "$tmp/seeds.txt"
expect 2 "seeds.txt:2" -- "$bin" crawl --seeds "$tmp/seeds.txt" --out "$tmp/out"
printf 'http://ok.test/\n' > "$tmp/good-seeds.txt"
printf '[politeness]\ndelay_ms = 100\ndealy = 3\n' > "$tmp/bad.toml"
expect 2 "bad.toml:3" -- "$bin" crawl --seeds "$tmp/good-seeds.txt" --out "$tmp/out" --config "$tmp/bad.toml"
expect 2 "log format" -- "$bin" --log-format xml url parse http://a.test/
expect 0 "^http://a.test/$" -- "$bin" url parse http://A.test
exit $fail

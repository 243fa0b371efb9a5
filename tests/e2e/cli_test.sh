#!/usr/bin/env bash
# End-to-end checks of the command line: help, version, usage errors (exit 2 with a hint),
# bad seed and config lines reported with their line numbers, out-of-range values named in
# the error, and a crawl that cannot start reporting why without an empty summary.
set -uo pipefail
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"  # absolute: one check runs elsewhere
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

# Out-of-range numbers and unknown words are usage errors naming the value. A crawl
# that wrongly starts anyway ends at once: its only host refuses connections, one try each.
printf '[retry]\nmax_attempts = 1\n' > "$tmp/fast.toml"
crawl_args=(--seeds "$tmp/good-seeds.txt" --config "$tmp/fast.toml" --connect-to ::127.0.0.1:1 --allow-address 127.0.0.0/8 --no-progress)
expect 2 "--delay-ms: must be between 0 and [0-9]+, got -5" -- "$bin" crawl "${crawl_args[@]}" --out "$tmp/r1" --delay-ms -5
expect 2 "--delay-ms: .*got 1e3" -- "$bin" crawl "${crawl_args[@]}" --out "$tmp/r2" --delay-ms 1e3
expect 2 "--max-pages: must be between 0 and [0-9]+, got -1" -- "$bin" crawl "${crawl_args[@]}" --out "$tmp/r3" --max-pages -1
expect 2 "--workers: must be between 0 and [0-9]+, got -2" -- "$bin" crawl "${crawl_args[@]}" --out "$tmp/r4" --workers -2
expect 2 "--max-depth: must be between 0 and [0-9]+, got -1" -- "$bin" crawl "${crawl_args[@]}" --out "$tmp/r5" --max-depth -1
expect 2 "--scope: must be any, host or site, got bogus" -- "$bin" crawl "${crawl_args[@]}" --out "$tmp/r6" --scope bogus
printf '[politeness]\ndelay_ms = -5\n' > "$tmp/negative.toml"
expect 2 "negative.toml:2: 'politeness.delay_ms' must be between 0 and [0-9]+, got -5" -- \
  "$bin" crawl --seeds "$tmp/good-seeds.txt" --out "$tmp/r7" --config "$tmp/negative.toml"
printf '[scope]\nmode = "bogus"\n' > "$tmp/scope.toml"
expect 2 "scope.toml:2: .*got \"bogus\"" -- \
  "$bin" crawl --seeds "$tmp/good-seeds.txt" --out "$tmp/r8" --config "$tmp/scope.toml"
tw_args=(--seeds-only --seeds "$tmp/tw-seeds.txt")
expect 2 "--hosts: must be between 1 and [0-9]+, got 0" -- "$bin" testweb "${tw_args[@]}" --hosts 0
expect 2 "--links: must be between 0 and [0-9]+, got -3" -- "$bin" testweb "${tw_args[@]}" --links -3
expect 2 "--cross-host-share: must be between 0 and 1, got 1.5" -- "$bin" testweb "${tw_args[@]}" --cross-host-share 1.5
expect 2 "--refresh-window: must be a duration .*a number needs a unit" -- \
  "$bin" crawl --seeds "$tmp/good-seeds.txt" --out "$tmp/r9" --refresh-window 30
expect 2 "--stop-after: must be between 1s and [0-9]+d, got 500ms" -- \
  "$bin" crawl --seeds "$tmp/good-seeds.txt" --out "$tmp/r10" --stop-after 500ms
expect 2 "--max-interval: must be a duration .*unknown unit" -- \
  "$bin" crawl --seeds "$tmp/good-seeds.txt" --out "$tmp/r11" --max-interval 3months
printf '[recrawl]\nrefresh_window = "1.5h"\n' > "$tmp/window.toml"
expect 2 "window.toml:2: 'recrawl.refresh_window': bad duration" -- \
  "$bin" crawl --seeds "$tmp/good-seeds.txt" --out "$tmp/r12" --config "$tmp/window.toml"
expect 2 "--change-every: must be a duration .*a number needs a unit" -- \
  "$bin" testweb "${tw_args[@]}" --change-every 10
expect 2 "--change-percent: must be between 0 and 100, got 101" -- \
  "$bin" testweb "${tw_args[@]}" --change-percent 101
expect 2 "--near-dup-percent: must be between 0 and 50, got 51" -- \
  "$bin" testweb "${tw_args[@]}" --near-dup-percent 51
expect 0 "" -- "$bin" testweb "${tw_args[@]}" --change-every 10s --change-percent 30 --near-dup-percent 5
expect 2 "--big-site: must be between 0 and 1000000, got 1000001" -- \
  "$bin" testweb "${tw_args[@]}" --big-site 1000001
expect 0 "" -- "$bin" testweb "${tw_args[@]}" --big-site 20 --trap-host
grep -qx 'http://big.test/' "$tmp/tw-seeds.txt" && grep -qx 'http://sessions.test/' "$tmp/tw-seeds.txt" ||
  { echo "FAIL: --big-site / --trap-host roots missing from the seeds"; fail=1; }
expect 2 "--refresh-window: must be between 0s and 366d, got 400d" -- \
  "$bin" audit --log "$tmp/none.jsonl" --manifest "$tmp/none.json" --refresh-window 400d
expect 2 "--max-examples: must be between 0 and [0-9]+, got -1" -- \
  "$bin" audit --log "$tmp/none.jsonl" --manifest "$tmp/none.json" --max-examples -1
expect 2 "--delay-ms: must be between 0 and [0-9]+, got -1" -- \
  "$bin" audit --log "$tmp/none.jsonl" --manifest "$tmp/none.json" --delay-ms -1

# A crawl that cannot start prints its error, and no (empty) summary.
expect_no_summary() {  # expect_no_summary CODE PATTERN -- command...: as expect, and no summary
  local code="$1" pattern="$2"; shift 3
  local output rc
  output="$("$@" 2>&1)"; rc=$?
  if [ "$rc" != "$code" ] || ! grep -qE -- "$pattern" <<<"$output"; then
    echo "FAIL: '$*' exited $rc (expected $code) or its output lacks /$pattern/:"
    echo "$output" | head -12; fail=1; return
  fi
  if grep -qE "^crawl (complete|stopped|interrupted)|seeds [0-9]+, admitted" <<<"$output"; then
    echo "FAIL: '$*' printed a summary of a crawl that never started:"; echo "$output" | head -12
    fail=1; return
  fi
  echo "ok: $*"
}
mkdir -p "$tmp/not-a-crawl"
echo "something else" > "$tmp/not-a-crawl/notes.txt"
expect_no_summary 2 "cannot start the crawl: .*not-a-crawl is not empty and holds no crawl state" -- \
  "$bin" crawl "${crawl_args[@]}" --out "$tmp/not-a-crawl"
expect_no_summary 1 "cannot start the crawl: .*cannot create output directory" -- \
  "$bin" crawl "${crawl_args[@]}" --out "$tmp/not-a-crawl/notes.txt/out"
expect_no_summary 2 "cannot start the crawl: .*already exists" -- \
  "$bin" crawl "${crawl_args[@]}" --out "$tmp/not-a-crawl" --fresh

# Seeds as arguments, as wget and Scrapy users type them: the crawl directory defaults to
# one named after the first seed's host in the working directory.
mkdir -p "$tmp/cwd"
expect 2 "seed argument:2: not a valid URL: nope" -- "$bin" crawl http://ok.test/ nope --out "$tmp/a1"
expect 2 "no seeds: give seed URLs or --seeds FILE" -- "$bin" crawl --out "$tmp/a2"
expect 0 "crawl complete" -- bash -c "cd '$tmp/cwd' && '$bin' crawl --config '$tmp/fast.toml' \
  --connect-to ::127.0.0.1:1 --allow-address 127.0.0.0/8 --no-progress http://ok.test:8080/ http://other.test/"
if grep -q '"url":"http://ok.test:8080/"' "$tmp/cwd/ok.test_8080/outcomes.jsonl" 2>/dev/null &&
   grep -q '"url":"http://other.test/"' "$tmp/cwd/ok.test_8080/outcomes.jsonl"; then
  echo "ok: seeds as arguments crawled into ok.test_8080/"
else
  echo "FAIL: no ok.test_8080/outcomes.jsonl with both seeds"; ls -R "$tmp/cwd" | head; fail=1
fi
expect 0 "crawl complete" -- "$bin" crawl --seeds "$tmp/good-seeds.txt" http://more.test/ \
  --out "$tmp/a3" --config "$tmp/fast.toml" --connect-to ::127.0.0.1:1 --allow-address 127.0.0.0/8 --no-progress
if ! grep -q '"url":"http://more.test/"' "$tmp/a3/outcomes.jsonl" ||
   ! grep -q '"url":"http://ok.test/"' "$tmp/a3/outcomes.jsonl"; then
  echo "FAIL: --seeds and seed arguments together"; fail=1
fi

expect 2 "log format" -- "$bin" --log-format xml url parse http://a.test/
expect 0 "^http://a.test/$" -- "$bin" url parse http://A.test
exit $fail

#!/usr/bin/env python3
"""Checks the `pages` table of a crawl with --metadata (tests/e2e/metadata_test.sh).

1. The rows with a WARC location are exactly the crawl's stored fetches: the set of
   (warc_file, warc_offset) of those rows equals the set of (filename, offset) of every CDXJ
   line (one per WARC response or revisit record), and no fetch_key appears twice.
2. Every request in the test web's request log has exactly one row, and every row one
   request. Rows are matched to requests URL by URL (the row's host and path+query against
   the log's host and request target), so the per-(host, status) counts printed at the end
   follow:
   - in the order the crawler began them (fetched_at), each row takes the request of its URL
     begun within [fetched_at - 1 s, fetched_at + 10 s] closest to fetched_at (fetched_at is
     when the crawler began the transfer; the request reaches the server after the connect).
     Closest, not earliest: after a kill on a loaded machine the dead process's request of
     a URL can fall inside the window of the restarted process's row for it (seen in CI: six
     rows took the dead requests, leaving the new ones "without a row");
   - a row with a status takes a request the server answered with that status (should the
     clocks disagree, any request of its URL with that status: counted and printed); a row
     whose status no request of its URL had is an error;
   - a row without a status says the crawler got no response (a timeout, a reset). The
     server may still have logged a status: it answered after the crawler had given up (the
     test web's /edge/slow answers after 3 s; the basic run's timeout is 2.5 s). So such a
     row takes a request of its URL within its window whatever status the server logged,
     since the crawler could not see it. A row without a status and no such request is an
     error: the test web is on loopback, so every request the crawler sent reaches its log;
   - with --kill-us, a request left over after that is excused only when the killed process
     sent it before the kill and its URL was requested again after the restart (the process
     died before writing its record; the new request has a row). Any other leftover request
     is a missing row.
   No other excuse: a retried attempt (a 408/429/5xx answer the crawler asks again) has a
   row of its own (outcome `retried`).
3. A SQL query for one page gives the WARC location from which `harvest warc cat` prints that
   page's record (its target URI and its payload).
"""
import argparse
import collections
import glob
import json
import os
import subprocess
import sys
import urllib.parse

NO_STATUS_BEFORE_US = 1_000_000   # a request may start this long before fetched_at (clocks)
NO_STATUS_AFTER_US = 10_000_000   # ... or this long after it (connect, a loaded machine)


def psql(url, sql):
    out = subprocess.run(["psql", url, "-qAtF", "\t", "-c", sql], check=True,
                         capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def url_key(url):
    """(host, request target) of a row's URL, as the test web logs a request."""
    sp = urllib.parse.urlsplit(url)
    target = sp.path or "/"
    if sp.query:
        target += "?" + sp.query
    return ((sp.hostname or "").lower(), target)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True, action="append", help="a crawl directory (repeat for workers)")
    ap.add_argument("--log", required=True)
    ap.add_argument("--url", required=True)
    ap.add_argument("--kill-us", type=int, default=0)
    a = ap.parse_args()
    failures = []

    rows = psql(a.url, "SELECT fetch_key, coalesce(warc_file, ''), coalesce(warc_offset, -1), host, "
                       "coalesce(status, -1), url, outcome, "
                       "(extract(epoch FROM fetched_at) * 1000000)::bigint FROM pages")
    # fetched_at keeps the crawl's microseconds, for rows written while the crawl runs (from
    # its page records) as for rows written after it (from its state): a time in whole
    # milliseconds comes once in a thousand rows, not for every row written live.
    whole_ms = sum(1 for r in rows if int(r[7]) % 1000 == 0)
    print(f"fetched_at in whole milliseconds: {whole_ms} of {len(rows)} rows")
    if whole_ms > max(2, len(rows) // 100):
        failures.append(f"{whole_ms} of {len(rows)} rows have fetched_at in whole milliseconds "
                        "(microseconds lost on the way)")
    keys = collections.Counter(r[0] for r in rows)
    dup = [k for k, n in keys.items() if n > 1]
    if dup:
        failures.append(f"{len(dup)} fetch keys twice, e.g. {dup[:3]}")
    stored = [r for r in rows if r[1]]
    row_locs = collections.Counter((r[1], int(r[2])) for r in stored)

    # 1. rows with a WARC location == CDXJ lines.
    cdx_locs = collections.Counter()
    for f in [f for d in a.out for f in glob.glob(os.path.join(d, "*.cdxj"))]:
        for line in open(f, encoding="utf-8"):
            j = json.loads(line.split(" ", 2)[2])
            cdx_locs[(j["filename"], int(j["offset"]))] += 1
    missing = cdx_locs - row_locs
    extra = row_locs - cdx_locs
    outcomes = collections.Counter(r[6] for r in rows if not r[1])
    print(f"rows {len(rows)}: {len(stored)} with a WARC location, CDXJ lines "
          f"{sum(cdx_locs.values())}; {len(rows) - len(stored)} attempts without one "
          f"({', '.join(f'{k} {v}' for k, v in sorted(outcomes.items())) or 'none'})")
    if missing:
        failures.append(f"{sum(missing.values())} stored fetches without a row, e.g. {list(missing)[:3]}")
    if extra:
        failures.append(f"{sum(extra.values())} rows without a stored fetch, e.g. {list(extra)[:3]}")

    # 2. one row per request, URL by URL.
    requests = [json.loads(l) for l in open(a.log, encoding="utf-8") if l.strip()]
    requests.sort(key=lambda r: r["start_us"])
    reqs_by_url = collections.defaultdict(list)
    for r in requests:
        reqs_by_url[(r["host"].lower(), r["path"])].append(r)
    rows_by_url = collections.defaultdict(list)
    for r in rows:
        rows_by_url[url_key(r[5])].append(r)

    requests_hs = collections.Counter((r["host"].lower(), r["status"]) for r in requests)
    rows_hs = collections.Counter()       # rows with a status, per (host, status)
    unseen_hs = collections.Counter()     # requests taken by a row without a status
    killed_hs = collections.Counter()     # requests excused by the kill
    unseen_by_status = collections.Counter()
    bad = []
    global_far = [0]  # rows with a status matched outside their time window
    for key in set(reqs_by_url) | set(rows_by_url):
        reqs = list(reqs_by_url.get(key, []))
        url_rows = rows_by_url.get(key, [])
        # In the order the crawler began them, each row takes the request of its URL begun
        # within its window closest to the row's fetch time: one with the row's status, or —
        # a row without a status — any (the crawler could not see what the server answered).
        for r in sorted(url_rows, key=lambda r: int(r[7])):
            status, t = int(r[4]), int(r[7])
            same = [q for q in reqs if status < 0 or q["status"] == status]
            near = [q for q in same
                    if t - NO_STATUS_BEFORE_US <= q["start_us"] <= t + NO_STATUS_AFTER_US]
            if not near and status >= 0 and same:
                near = same  # the status matches; only the clocks disagree (counted below)
                global_far[0] += 1
            if not near:
                what = f"status {status}" if status >= 0 else "no status"
                bad.append(f"{r[5]}: a row with {what} ({r[6]}, fetched at {t}) and no such "
                           f"request; requests left: {[(q['start_us'], q['status']) for q in reqs]}")
                continue
            # The closest in time: after a kill, the dead process's request of the URL (up to
            # a second before, on a loaded machine) is in the window too, and is excused below.
            q = min(near, key=lambda q: (abs(q["start_us"] - t), q["start_us"]))
            reqs.remove(q)
            if status >= 0:
                rows_hs[(key[0], status)] += 1
            else:
                unseen_hs[(key[0], q["status"])] += 1
                unseen_by_status[q["status"]] += 1
        # What is left must be the kill's.
        all_reqs = reqs_by_url.get(key, [])
        for q in reqs:
            if a.kill_us and q["start_us"] < a.kill_us and any(x["start_us"] >= a.kill_us for x in all_reqs):
                killed_hs[(key[0], q["status"])] += 1
            else:
                bad.append(f"http://{key[0]}{key[1]}: request at {q['start_us']} "
                           f"(status {q['status']}) has no row")
    if bad:
        failures.append(f"{len(bad)} requests and rows unmatched, e.g.:\n  " + "\n  ".join(sorted(bad)[:10]))
    for hs in sorted(requests_hs):
        e = requests_hs[hs] - unseen_hs[hs] - killed_hs[hs]
        if rows_hs[hs] != e and not bad:
            failures.append(f"{hs}: {rows_hs[hs]} rows for {e} requests")
    print(f"requests {len(requests)}: {sum(rows_hs.values())} rows with their status, "
          f"{sum(unseen_hs.values())} rows without a status (no response) for requests the "
          f"server logged with statuses {dict(sorted(unseen_by_status.items()))}, "
          f"{sum(killed_hs.values())} sent by the killed process and requested again, "
          f"{global_far[0]} matched outside the time window; "
          f"{len(requests_hs)} (host, status) pairs over {len({k[0] for k in requests_hs})} hosts compared")

    # 3. One page through SQL and `harvest warc cat`.
    page = psql(a.url, "SELECT url, warc_file, warc_offset, digest FROM pages "
                       "WHERE outcome = 'fetched' AND status = 200 AND mime = 'text/html' "
                       "AND url LIKE '%/p/%' ORDER BY fetch_key LIMIT 1")
    if not page:
        failures.append("no fetched HTML page row to look up")
    else:
        url, warc_file, offset, digest = page[0]
        where = [d for d in a.out if os.path.exists(os.path.join(d, warc_file))]
        loc = f"{os.path.join(where[0] if where else a.out[0], warc_file)}:{offset}"
        cat = subprocess.run([a.bin, "warc", "cat", loc], check=True, capture_output=True).stdout
        head = cat[:4096].decode("utf-8", "replace")
        if f"WARC-Target-URI: {url}" not in head or "WARC-Type: response" not in head:
            failures.append(f"warc cat {loc} does not print the response of {url}:\n{head[:600]}")
        elif f"WARC-Payload-Digest: {digest}" not in head:
            failures.append(f"warc cat {loc}: payload digest is not the row's {digest}")
        elif "HTTP/1.1 200" not in head or "content-type: text/html" not in head.lower():
            failures.append(f"warc cat {loc}: not the page's 200 text/html response")
        else:
            print(f"SQL: {url} -> {warc_file}:{offset}; harvest warc cat prints its response")

    if failures:
        for f in failures:
            print("FAIL:", f)
        sys.exit(1)
    print("metadata rows: all checks passed")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Checks the `pages` table of a crawl with --metadata (tests/e2e/metadata_test.sh).

1. The rows are exactly the crawl's stored fetches: the set of (warc_file, warc_offset) of the
   rows equals the set of (filename, offset) of every CDXJ line (one per WARC response or
   revisit record), and no fetch_key appears twice.
2. Per host and status the rows match the test web's request log: every request has one row,
   except a retried attempt (a 408/429/5xx answer followed by another request of the same
   URL: the crawler stores no record for it; robots.txt answers are all stored) and, with --kill-us, a request sent by the
   killed process before the kill whose URL was requested again after it (its record was
   lost with the process; the new request has a row). Nothing else may differ.
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

RETRYABLE = {408, 429} | set(range(500, 600))


def psql(url, sql):
    out = subprocess.run(["psql", url, "-qAtF", "\t", "-c", sql], check=True,
                         capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True, action="append", help="a crawl directory (repeat for workers)")
    ap.add_argument("--log", required=True)
    ap.add_argument("--url", required=True)
    ap.add_argument("--kill-us", type=int, default=0)
    a = ap.parse_args()
    failures = []

    rows = psql(a.url, "SELECT fetch_key, warc_file, warc_offset, host, status, url FROM pages")
    keys = collections.Counter(r[0] for r in rows)
    dup = [k for k, n in keys.items() if n > 1]
    if dup:
        failures.append(f"{len(dup)} fetch keys twice, e.g. {dup[:3]}")
    row_locs = collections.Counter((r[1], int(r[2])) for r in rows)

    # 1. rows == CDXJ lines.
    cdx_locs = collections.Counter()
    for f in [f for d in a.out for f in glob.glob(os.path.join(d, "*.cdxj"))]:
        for line in open(f, encoding="utf-8"):
            j = json.loads(line.split(" ", 2)[2])
            cdx_locs[(j["filename"], int(j["offset"]))] += 1
    missing = cdx_locs - row_locs
    extra = row_locs - cdx_locs
    print(f"rows {len(rows)}, CDXJ lines {sum(cdx_locs.values())}")
    if missing:
        failures.append(f"{sum(missing.values())} stored fetches without a row, e.g. {list(missing)[:3]}")
    if extra:
        failures.append(f"{sum(extra.values())} rows without a stored fetch, e.g. {list(extra)[:3]}")

    # 2. rows per (host, status) == requests per (host, status), less the excused ones.
    requests = [json.loads(l) for l in open(a.log, encoding="utf-8") if l.strip()]
    requests.sort(key=lambda r: r["start_us"])
    by_url = collections.defaultdict(list)
    for r in requests:
        by_url[(r["host"], r["path"])].append(r)
    expected = collections.Counter()
    excusable = collections.Counter()
    retried = 0
    for reqs in by_url.values():
        for i, r in enumerate(reqs):
            later = reqs[i + 1:]
            key = (r["host"], r["status"])
            if r.get("kind") != "robots" and r["status"] in RETRYABLE and later:
                retried += 1
                continue
            expected[key] += 1
            if a.kill_us and r["start_us"] < a.kill_us and any(x["start_us"] >= a.kill_us for x in later):
                excusable[key] += 1
    got = collections.Counter((r[3].split(":")[0], int(r[4])) for r in rows)
    excused = 0
    for key in sorted(set(expected) | set(got)):
        e, g = expected[key], got[key]
        if g > e:
            failures.append(f"{key}: {g} rows for {e} requests")
        elif e - g > excusable[key]:
            failures.append(f"{key}: {g} rows for {e} requests ({excusable[key]} excusable by the kill)")
        else:
            excused += e - g
    print(f"requests {len(requests)}: {retried} retried attempts (no record), "
          f"{excused} sent by the killed process and requested again; "
          f"{len(expected)} (host, status) pairs over {len({k[0] for k in expected})} hosts compared")

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

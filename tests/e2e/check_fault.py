#!/usr/bin/env python3
"""Checks the end state of a crawl that was killed and resumed (see fault_test.sh):
 1. every response/revisit record of every WARC has exactly one CDXJ line (the restart
    reconciled the index with the WARC files) and every CDXJ line names such a record;
 2. no URL has more than one full response record (a page fetched again after a kill became
    a revisit) and no payload digest is stored twice as a full response;
 3. every URL the crawler requested (request log of the test web) has a capture: nothing
    fetched was lost;
 4. every URL admitted has a final outcome;
 5. at least one kill hit the crawler while WARC records were written but not committed
    (a restart reported unindexed records), and the torn tail left at kill 2 was cut;
 6. every outcome other than fetched and revisit gives its reason in `detail`.
Exits 1 with a message on the first failed check. A check never passes on empty data: no
records, no requests or no outcomes is a failure, not a vacuous success.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from outcome_details import missing_details  # noqa: E402 (a sibling file)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def host_path(url):
    u = urllib.parse.urlsplit(url)
    path = u.path or "/"
    if u.query:
        path += "?" + u.query
    return (u.hostname or "").lower(), path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--kills", type=int, required=True)
    ap.add_argument("--allow-not-stored", action="store_true",
                    help="an output error was injected: pages it could not store were recorded "
                         "not-stored (and fetched again by the next run)")
    args = ap.parse_args()
    crawl = os.path.join(args.out, "crawl")

    # 1. WARC records vs CDXJ lines.
    ls = subprocess.run([args.bin, "warc", "ls", crawl], capture_output=True, text=True)
    if ls.returncode != 0:
        fail("harvest warc ls: " + ls.stderr[:300])
    records = {}
    for line in ls.stdout.splitlines():
        f = line.split("\t")
        if len(f) >= 4 and f[2] in ("response", "revisit"):
            records[(f[0], int(f[1]))] = (f[2], f[3])
    cdx = {}
    for path in sorted(glob.glob(os.path.join(crawl, "*.cdxj"))):
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                parts = line.rstrip("\n").split(" ", 2)
                if len(parts) != 3:
                    fail(f"{path}:{n}: not a CDXJ line")
                row = json.loads(parts[2])
                key = (row["filename"], int(row["offset"]))
                if key in cdx:
                    fail(f"{path}:{n}: record {key} indexed twice")
                cdx[key] = row
    if not records:
        fail(f"no response or revisit record in {crawl}: the crawl stored nothing")
    unindexed = [k for k in records if k not in cdx]
    if unindexed:
        fail(f"{len(unindexed)} WARC records have no CDXJ line, e.g. {unindexed[:3]}")
    dangling = [k for k in cdx if k not in records]
    if dangling:
        fail(f"{len(dangling)} CDXJ lines name no response/revisit record, e.g. {dangling[:3]}")
    print(f"index: {len(records)} response/revisit records, each with one CDXJ line")

    # 2. One full response per URL; no payload stored twice.
    responses = {}
    digests = {}
    revisits = 0
    for key, (kind, url) in records.items():
        if kind == "revisit":
            revisits += 1
            continue
        if url in responses:
            fail(f"{url} stored twice as a full response: {responses[url]} and {key}")
        responses[url] = key
        d = cdx[key].get("digest")
        if d and d in digests and int(cdx[key].get("status", 0) or 0) == 200:
            fail(f"payload {d} stored twice as a full response: {digests[d]} and {url}")
        digests.setdefault(d, url)
    print(f"stored: {len(responses)} URLs as full responses (each once), {revisits} revisits")

    # 3. Every requested URL has a capture.
    captured = {host_path(url) for (_, url) in records.values()}
    requested = set()
    for r in jsonl(os.path.join(args.out, "requests.jsonl")):
        requested.add((r["host"].lower().split(":")[0], r["path"]))
    if not requested:
        fail("the request log is empty: the crawl requested nothing")
    lost = sorted(requested - captured)
    if lost:
        fail(f"{len(lost)} requested URLs have no capture, e.g. {lost[:5]}")
    print(f"no loss: all {len(requested)} requested URLs have a capture")

    # 4. Outcomes: every URL with a capture has an outcome, and no `not-stored`.
    outcomes_path = os.path.join(crawl, "outcomes.jsonl")
    outcomes = jsonl(outcomes_path)
    if not outcomes:
        fail(f"{outcomes_path} is empty: the crawl recorded no outcome")
    with_outcome = {host_path(o["url"]) for o in outcomes}
    no_outcome = sorted(captured - with_outcome)
    if no_outcome:
        fail(f"{len(no_outcome)} captured URLs have no outcome, e.g. {no_outcome[:5]}")
    bad = [o for o in outcomes if o["outcome"] == "not-stored"]
    if bad and not args.allow_not_stored:
        fail(f"{len(bad)} not-stored outcomes, e.g. {bad[:2]}")
    print(f"outcomes: {len(outcomes)} lines cover every capture")
    if args.kills > 0:
        check_recovery(args)
    # 6. Last, so that a missing reason does not hide the result of every other check.
    problem = missing_details(outcomes, outcomes_path)
    if problem:
        fail(problem)
    print("details: every outcome other than fetched/revisit gives its reason")


def check_recovery(args):
    """5. Recovery was exercised: a restart found unindexed records, and a torn tail cut."""
    unindexed_found = 0
    torn = 0
    for path in glob.glob(os.path.join(args.out, "run-*.txt")) + [os.path.join(args.out, "final.txt")]:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                m = re.search(r"cut a torn tail of (\d+) bytes, indexed (\d+) records", line)
                if m:
                    torn += int(m.group(1)) > 0
                    unindexed_found += int(m.group(2)) > 0
    print(f"recovery: {unindexed_found} restarts found unindexed WARC records, {torn} a torn tail")
    if unindexed_found == 0:
        fail("no kill landed while WARC records were uncommitted; recovery was not exercised")
    if args.kills >= 2 and torn == 0:
        fail("the torn tail left at kill 2 was not cut by the restart")


if __name__ == "__main__":
    main()

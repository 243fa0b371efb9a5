#!/usr/bin/env python3
"""Checks the end state of a shared crawl (distributed_test.sh) over every worker's directory:
 1. in each directory every response/revisit record has exactly one CDXJ line and every
    CDXJ line names such a record (a killed worker's directory after `harvest warc repair`);
 2. no URL has more than one full response record across all workers' WARC files (a page a
    dead worker had stored and another fetched again became a revisit);
 3. every URL any worker requested (the test web's merged request log) has a capture in some
    worker's WARC files: nothing fetched was lost;
 4. every captured URL has an outcome line in some worker's outcomes.jsonl;
 5. every worker that finished wrote WARC records (the work was shared).
Exits 1 with a message on the first failed check; empty data is a failure.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import urllib.parse


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
    ap.add_argument("--log", required=True)
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    responses = {}
    captured = set()
    with_outcome = set()
    revisits = 0
    for d in args.dirs:
        ls = subprocess.run([args.bin, "warc", "ls", d], capture_output=True, text=True)
        if ls.returncode != 0:
            fail(f"harvest warc ls {d}: {ls.stderr[:300]}")
        records = {}
        for line in ls.stdout.splitlines():
            f = line.split("\t")
            if len(f) >= 4 and f[2] in ("response", "revisit"):
                records[(f[0], int(f[1]))] = (f[2], f[3])
        cdx = set()
        for path in sorted(glob.glob(os.path.join(d, "*.cdxj"))):
            with open(path, encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    parts = line.rstrip("\n").split(" ", 2)
                    if len(parts) != 3:
                        fail(f"{path}:{n}: not a CDXJ line")
                    row = json.loads(parts[2])
                    key = (row["filename"], int(row["offset"]))
                    if key in cdx:
                        fail(f"{path}:{n}: record {key} indexed twice")
                    cdx.add(key)
        if not records:
            fail(f"no response or revisit record in {d}: this worker stored nothing")
        unindexed = [k for k in records if k not in cdx]
        if unindexed:
            fail(f"{d}: {len(unindexed)} WARC records have no CDXJ line, e.g. {unindexed[:3]}")
        dangling = [k for k in cdx if k not in records]
        if dangling:
            fail(f"{d}: {len(dangling)} CDXJ lines name no record, e.g. {dangling[:3]}")
        for key, (kind, url) in records.items():
            captured.add(host_path(url))
            if kind == "revisit":
                revisits += 1
                continue
            if url in responses:
                fail(f"{url} stored twice as a full response: {responses[url]} and {d} {key}")
            responses[url] = (d, key)
        outcomes = os.path.join(d, "outcomes.jsonl")
        if os.path.exists(outcomes):
            with_outcome |= {host_path(o["url"]) for o in jsonl(outcomes)}
        print(f"{os.path.basename(d)}: {len(records)} response/revisit records, each indexed once")
    print(f"stored: {len(responses)} URLs as full responses across {len(args.dirs)} workers "
          f"(each once), {revisits} revisits")
    requested = set()
    for r in jsonl(args.log):
        requested.add((r["host"].lower().split(":")[0], r["path"]))
    if not requested:
        fail("the request log is empty")
    lost = sorted(requested - captured)
    if lost:
        fail(f"{len(lost)} requested URLs have no capture in any worker, e.g. {lost[:5]}")
    print(f"no loss: all {len(requested)} requested URLs have a capture")
    no_outcome = sorted(captured - with_outcome)
    if no_outcome:
        fail(f"{len(no_outcome)} captured URLs have no outcome, e.g. {no_outcome[:5]}")
    print("outcomes: every capture has an outcome line")


if __name__ == "__main__":
    main()

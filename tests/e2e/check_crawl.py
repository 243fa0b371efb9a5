#!/usr/bin/env python3
"""Checks a finished test-web crawl (see crawl_test.sh):
 1. every hostile/edge path listed in the test web's manifest that the crawl reached has a
    recorded outcome (outcomes.jsonl) - and every edge path linked from a crawled page was reached;
    the exact-duplicate pair ended as one fetched and one revisit, the near-duplicate pair was
    noted (both pairs must have been reached: the test web always serves and links them);
 2. exact duplicates were stored as revisit records (at least one revisit, and no payload digest
    stored twice as a full response);
 3. `harvest warc get --decode` returns, byte for byte, what the test web serves for a sample of
    stored pages (a fresh test web with the same seed, fetched without compression);
 4. every outcome other than fetched and revisit gives its reason in `detail`.
Exits 1 with a message on the first failed check. A check never passes on empty data: no
edge paths, no outcomes or no stored pages is a failure, not a vacuous success.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time
import urllib.parse
import http.client

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from outcome_details import missing_details  # noqa: E402 (a sibling file)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def load_jsonl(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if line:
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    fail(f"{path}:{n}: not JSON: {e}")
    return rows


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
    ap.add_argument("--samples", type=int, default=25)
    ap.add_argument("--hosts", type=int, required=True, help="the test web's --hosts")
    ap.add_argument("--pages", type=int, required=True, help="the test web's --pages")
    ap.add_argument("--testweb-flag", action="append", default=[],
                    help="another flag the crawled test web had (e.g. --trap-host); repeatable")
    args = ap.parse_args()
    crawl = os.path.join(args.out, "crawl")
    web = os.path.join(args.out, "testweb")
    manifest = json.load(open(os.path.join(web, "manifest.json"), encoding="utf-8"))
    outcomes_path = os.path.join(crawl, "outcomes.jsonl")
    outcomes = load_jsonl(outcomes_path)
    if not outcomes:
        fail(f"{outcomes_path} is empty: the crawl recorded no outcome")
    by_url = {}
    for o in outcomes:
        by_url.setdefault(host_path(o["url"]), []).append(o)
    requested = set()
    calendar = {}  # host -> requests into its calendar trap
    for r in load_jsonl(os.path.join(web, "requests.jsonl")):
        host = r["host"].lower().split(":")[0]
        requested.add((host, r["path"]))
        if r["path"].startswith("/calendar/"):
            calendar[host] = calendar.get(host, 0) + 1
    # Each infinite calendar (a trap the depth limit bounds) costs a bounded number of
    # requests, budgets or not.
    worst = max(calendar.items(), key=lambda kv: kv[1], default=("-", 0))
    if worst[1] > 200:
        fail(f"{worst[1]} requests into the calendar trap of {worst[0]} (at most 200 expected)")
    print(f"calendar traps: {sum(calendar.values())} requests over {len(calendar)} host(s), "
          f"at most {worst[1]} at one (at most 200)")

    # 1. Edge paths: every one requested by the crawler has an outcome.
    edges = manifest.get("edge", [])
    if not edges:
        fail("the manifest lists no edge paths: the crawl test needs the hostile hosts "
             "(testweb without --no-hostile)")
    missing = []
    reached = 0
    for e in edges:
        key = (e["host"].lower(), e["path"])
        if key in requested:
            reached += 1
            if key not in by_url:
                missing.append(f'{e["host"]}{e["path"]} ({e.get("behaviour", "?")})')
    for e in edges:
        if e.get("expect") == "not-fetched" and (e["host"].lower(), e["path"]) in requested:
            fail(f'{e["host"]}{e["path"]} ({e.get("behaviour")}) must not be fetched but was')
    if missing:
        fail(f"{len(missing)} hostile/edge URLs were requested but have no recorded outcome: "
             + ", ".join(missing[:10]))
    # http://hostile.test/ (linked from the root of h0000.test, a seed) links to every edge
    # path: each one a crawler may fetch must have been requested. Left out: the ones it must
    # not fetch, the canonical target (fetching it is optional) and the calendar (a trap).
    if ("hostile.test", "/") not in requested:
        fail("http://hostile.test/ was never requested: the edge paths were not reached")
    optional = ("not-fetched", "fetched-or-not", "trap")
    unreached = [f'{e["host"]}{e["path"]} ({e.get("behaviour")})' for e in edges
                 if e.get("expect") not in optional
                 and (e["host"].lower(), e["path"]) not in requested]
    if unreached:
        fail(f"{len(unreached)} of {len(edges)} edge paths were never requested although "
             "linked from a crawled page: " + ", ".join(unreached[:10]))
    print(f"edge paths: {reached} of {len(edges)} requested, each with a recorded outcome")

    # The test web's exact-duplicate pair: one stored as a response, the other as a revisit;
    # its near-duplicate pair (same article, other boilerplate): the later one noted as such.
    # Over https (crawl_test.sh MODE https*), a page linked as http:// may also have the
    # outcome of its http:// URL (a 301 to https://, or upgraded): the https:// ones decide.
    def final_scheme(rows):
        https = [o for o in rows if o["url"].startswith("https://")]
        return https or rows

    def outcomes_of(behaviour):
        rows = []
        for e in edges:
            if e.get("behaviour") == behaviour:
                rows += final_scheme(by_url.get((e["host"].lower(), e["path"]), []))
        return rows
    # The test web always serves and links both pairs: a pair without outcomes was never
    # reached, which is a failure, not a pass.
    def pair(behaviour):
        urls = [(e["host"].lower(), e["path"]) for e in edges if e.get("behaviour") == behaviour]
        if len(urls) != 2:
            fail(f"the manifest lists {len(urls)} {behaviour} paths, expected a pair")
        unreached = [f"{h}{p}" for h, p in urls if (h, p) not in by_url]
        if unreached:
            fail(f"the {behaviour} pair was never reached: no outcome for "
                 + ", ".join(unreached))
    pair("exact-duplicate")
    pair("near-duplicate")
    exact = sorted(o["outcome"] for o in outcomes_of("exact-duplicate"))
    if exact != ["fetched", "revisit"]:
        fail(f"exact-duplicate pair has outcomes {exact}, expected one fetched and one revisit")
    near = outcomes_of("near-duplicate")
    if not any(o.get("detail", "").startswith("near-duplicate of ") for o in near):
        fail("the near-duplicate pair was not detected (no outcome with detail near-duplicate)")
    print(f"duplicates: exact pair {exact}, near pair detected")
    counts = {}
    for o in outcomes:
        counts[o["outcome"]] = counts.get(o["outcome"], 0) + 1
    print("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))

    # 2. Revisits: no payload digest stored twice as a full response.
    cdx = []
    for name in sorted(os.listdir(crawl)):
        if name.endswith(".cdxj"):
            with open(os.path.join(crawl, name), encoding="utf-8") as f:
                for line in f:
                    parts = line.rstrip("\n").split(" ", 2)
                    if len(parts) == 3:
                        cdx.append(json.loads(parts[2]))
    if not cdx:
        fail("no CDXJ index lines")
    # The index replay tools read: every CDXJ sorted once the crawl has closed its WARCs, and
    # `warc index` merges them into one sorted index holding every line.
    c_locale = dict(os.environ, LC_ALL="C")
    for name in sorted(os.listdir(crawl)):
        if name.endswith(".cdxj"):
            r = subprocess.run(["sort", "-c", os.path.join(crawl, name)], env=c_locale,
                               capture_output=True, text=True)
            if r.returncode != 0:
                fail(f"{name} is not sorted (LC_ALL=C sort -c): {r.stderr.strip()}")
    merged = subprocess.run([args.bin, "warc", "index", crawl], capture_output=True)
    if merged.returncode != 0:
        fail("harvest warc index: " + merged.stderr.decode(errors="replace").strip())
    merged_lines = merged.stdout.splitlines()
    if len(merged_lines) != len(cdx) or merged_lines != sorted(merged_lines):
        fail(f"harvest warc index: {len(merged_lines)} lines, not the {len(cdx)} sorted lines")
    print(f"index: every CDXJ sorted; warc index merged {len(merged_lines)} lines")
    full = {}
    revisits = 0
    for row in cdx:
        if row.get("mime") == "warc/revisit":
            revisits += 1
            continue
        d = row.get("digest")
        if d in full and row.get("length", 0) and int(row.get("status", 0) or 0) == 200:
            fail(f'payload {d} stored twice as a full response: {full[d]} and {row["url"]}')
        full.setdefault(d, row["url"])
    if revisits == 0:
        fail("no revisit records although the test web serves exact duplicates")
    print(f"index: {len(cdx)} records, {revisits} revisits, {len(full)} distinct payloads")

    # 3. warc get == what the test web serves.
    pages = [r for r in cdx if r.get("mime") == "text/html" and str(r.get("status")) == "200"]
    random.seed(7)
    sample = random.sample(pages, min(args.samples, len(pages)))
    if not sample:
        fail("no stored HTML pages to compare")
    hosts = args.hosts
    pages_per_host = args.pages
    proc = subprocess.Popen([args.bin, "testweb", "--listen", "127.0.0.1:0", "--hosts",
                             str(hosts), "--pages", str(pages_per_host),
                             "--seed", str(manifest.get("seed", 1)), *args.testweb_flag],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        if "listening on" not in line:
            fail("second test web did not start: " + line)
        port = int(line.strip().rsplit(":", 1)[1])
        same = 0
        for row in sample:
            host, path = host_path(row["url"])
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", path, headers={"Host": host, "User-Agent": "check_crawl"})
            served = conn.getresponse().read()
            conn.close()
            stored = subprocess.run([args.bin, "warc", "get", "--decode", crawl, row["url"]],
                                    capture_output=True, check=False)
            if stored.returncode != 0:
                fail(f'harvest warc get {row["url"]} exited {stored.returncode}: '
                     + stored.stderr.decode(errors="replace")[:300])
            if stored.stdout != served:
                fail(f'harvest warc get {row["url"]}: {len(stored.stdout)} bytes differ from the '
                     f'{len(served)} bytes the test web serves')
            same += 1
        print(f"warc get: {same} sampled pages byte-identical to the test web")
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    # 4. Every outcome but fetched/revisit has its reason.
    problem = missing_details(outcomes, outcomes_path)
    if problem:
        fail(problem)
    print(f"details: every outcome other than fetched/revisit gives its reason")


if __name__ == "__main__":
    main()

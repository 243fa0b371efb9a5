#!/usr/bin/env python3
"""HTTP checks of the admin API for tests/e2e/admin_test.sh (docs/admin-api.md).

Subcommands:
  live BASE STATE POLICY_HOST INJECT_HOST BLOCK_HOST METRICS_OUT
      against a running crawl: every endpoint, its bad inputs, a policy, an injected seed, a
      block and a pause; writes the moments the log check needs to STATE (JSON).
  log LOG STATE DELAY_MS
      after the crawl, from the test web's request log: the policy's gaps, the injected
      host crawled, nothing requested while paused or blocked, nothing from a refused request.
  serve BASE
      against `harvest serve` over the finished crawl: complete, read-only, pages browsable.
  token BASE TOKEN
      against a server started with --admin-token-file: 401 without or with a wrong token.
Only urllib: no third-party packages. Each failed check exits non-zero with a FAIL line.
"""
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

checks = 0
IN_FLIGHT_US = 100_000  # see the pause check in log_check


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def ok(cond, msg):
    global checks
    if not cond:
        fail(msg)
    checks += 1


def now_us():
    return int(time.time() * 1_000_000)


def call(base, method, path, body=None, headers=None, raw=None):
    """One request; returns (status, headers, body bytes). body: a JSON value, raw: bytes."""
    data = raw
    hdrs = dict(headers or {})
    if body is not None:
        data = json.dumps(body).encode()
    if data is not None:
        hdrs.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(base + path, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def call_json(base, method, path, body=None, expect=200, **kw):
    status, hdrs, data = call(base, method, path, body, **kw)
    ok(status == expect, f"{method} {path} -> {status}, expected {expect}: {data[:300]!r}")
    try:
        value = json.loads(data)
    except ValueError:
        fail(f"{method} {path}: the answer is not JSON: {data[:300]!r}")
    ok(hdrs.get("Cache-Control") == "no-store", f"{method} {path}: no Cache-Control: no-store")
    return value


def error(base, method, path, expect, *names, body=None, raw=None, headers=None):
    """A refused request: status `expect`, a JSON {"error": msg} naming each of `names`."""
    status, hdrs, data = call(base, method, path, body, raw=raw, headers=headers)
    shown = f"{method} {path} {(json.dumps(body) if body is not None else '')[:80]}"
    ok(status == expect, f"{shown} -> {status}, expected {expect}: {data[:300]!r}")
    ok((hdrs.get("Content-Type") or "").startswith("application/json"),
       f"{shown}: error is not application/json ({hdrs.get('Content-Type')})")
    try:
        msg = json.loads(data)["error"]
    except (ValueError, KeyError, TypeError):
        fail(f"{shown}: the error body is not {{\"error\": ...}}: {data[:300]!r}")
    ok(isinstance(msg, str) and msg, f"{shown}: empty error message")
    for n in names:
        ok(n.lower() in msg.lower(), f"{shown}: error {msg!r} does not name {n!r}")
    print(f"  ok {expect} {shown.strip()}: {msg}")
    return hdrs, msg


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check_status_shape(s):
    for f in ("pages_per_sec", "error_rate_percent", "uptime_s"):
        ok(is_num(s.get(f)) and s[f] >= 0, f"/status {f}: {s.get(f)!r}")
    for f in ("queue_depth", "bytes_stored", "pages_stored"):
        ok(is_int(s.get(f)) and s[f] >= 0, f"/status {f}: {s.get(f)!r}")
    hosts = s.get("hosts")
    ok(isinstance(hosts, dict), f"/status hosts: {hosts!r}")
    for f in ("active", "ready", "waiting", "blocked"):
        ok(is_int(hosts.get(f)) and hosts[f] >= 0, f"/status hosts.{f}: {hosts.get(f)!r}")
    ok(s.get("state") in ("starting", "running", "paused", "draining", "complete", "stopped"),
       f"/status state: {s.get('state')!r}")


PAGE_FIELDS = {"id": is_int, "url": lambda v: isinstance(v, str) and v.startswith("http"),
               "status": is_int, "fetched_at": lambda v: isinstance(v, str) and v.endswith("Z"),
               "fetched_at_unix_ms": is_int, "mime": lambda v: isinstance(v, str),
               "title": lambda v: isinstance(v, str), "digest": lambda v: isinstance(v, str),
               "warc_file": lambda v: isinstance(v, str) and v.endswith(".warc.gz"),
               "warc_offset": is_int, "warc_length": is_int}


def check_page(p):
    for f, good in PAGE_FIELDS.items():
        ok(f in p and good(p[f]), f"page {p.get('id')}: field {f} = {p.get(f)!r}")


def host_of(url):
    return urllib.parse.urlsplit(url).hostname


def check_pages(base, policy_host):
    """GET /pages: shape, limit/cursor paging, host/status/since filters; one page by id and
    its content. Returns an HTML page."""
    a = call_json(base, "GET", "/pages?limit=5")
    ok(len(a["pages"]) == 5, f"/pages?limit=5 answered {len(a['pages'])} pages")
    for p in a["pages"]:
        check_page(p)
    ok(isinstance(a.get("next_cursor"), str), f"/pages next_cursor {a.get('next_cursor')!r}")
    b = call_json(base, "GET", "/pages?limit=5&cursor=" + urllib.parse.quote(a["next_cursor"]))
    ok(len(b["pages"]) >= 1, "the second page of /pages is empty")
    ids_a = [p["id"] for p in a["pages"]]
    ids_b = [p["id"] for p in b["pages"]]
    ok(not set(ids_a) & set(ids_b), f"/pages pages overlap: {ids_a} / {ids_b}")
    ok(len(set(ids_a + ids_b)) == len(ids_a + ids_b), f"/pages repeats an id: {ids_a + ids_b}")
    # Filters: every answer matches them.
    f = call_json(base, "GET", f"/pages?host={policy_host}&status=200&limit=3")
    ok(1 <= len(f["pages"]) <= 3, f"/pages?host={policy_host}&status=200&limit=3: {len(f['pages'])}")
    for p in f["pages"]:
        ok(host_of(p["url"]) == policy_host and p["status"] == 200, f"filter not applied: {p}")
    since_ms = a["pages"][-1]["fetched_at_unix_ms"]
    s = call_json(base, "GET", f"/pages?since={since_ms // 1000 + 1}&limit=1000")
    for p in s["pages"]:
        ok(p["fetched_at_unix_ms"] >= (since_ms // 1000 + 1) * 1000, f"since not applied: {p}")
    future = call_json(base, "GET", "/pages?since=2100-01-01T00:00:00Z")
    ok(future["pages"] == [] and future["next_cursor"] is None, f"/pages since 2100: {future}")
    print(f"  ok /pages: limit/cursor ({ids_a} then {ids_b}), host+status filter, since")
    # One HTML page by id, and its content.
    html = [p for p in f["pages"] + a["pages"] + b["pages"] if p["mime"].startswith("text/html")]
    if not html:
        html = [p for p in call_json(base, "GET", "/pages?status=200&limit=100")["pages"]
                if p["mime"].startswith("text/html")]
    ok(html, "no text/html page among the stored pages")
    page = html[0]
    one = call_json(base, "GET", f"/pages/{page['id']}")
    ok(one == page, f"/pages/{page['id']} differs from its /pages entry: {one} vs {page}")
    status, hdrs, body = call(base, "GET", f"/pages/{page['id']}/content")
    ok(status == 200, f"/pages/{page['id']}/content -> {status}")
    ok(hdrs.get("Content-Type", "").startswith("text/html"),
       f"/pages/{page['id']}/content Content-Type {hdrs.get('Content-Type')}")
    ok("sandbox" in hdrs.get("Content-Security-Policy", ""), "content served without CSP sandbox")
    ok(hdrs.get("X-Content-Type-Options") == "nosniff", "content served without nosniff")
    text = body.decode("utf-8", "replace")
    ok("<html" in text.lower() and "</html>" in text.lower(), f"content is not HTML: {text[:200]!r}")
    if page["title"]:
        ok(page["title"] in text, f"content lacks the page's title {page['title']!r}")
    print(f"  ok /pages/{page['id']} and its content ({len(body)} bytes of HTML, {page['url']})")
    return page


def live(base, state_path, policy_host, inject_host, block_host, metrics_out):
    st = {}
    # --- GET /status
    s = call_json(base, "GET", "/status")
    check_status_shape(s)
    ok(s["state"] in ("starting", "running"), f"/status state {s['state']} at the start")
    print(f"  ok GET /status: {json.dumps({k: v for k, v in s.items() if k != 'busiest_hosts'})}")
    # Let the crawl get going (robots.txt and a few pages of every host) so that the pause
    # and the policy below interrupt a busy crawl.
    deadline = time.time() + 20
    while s["pages_stored"] < 60 and time.time() < deadline:
        time.sleep(0.1)
        s = call_json(base, "GET", "/status")
    ok(s["pages_stored"] >= 60 and s["state"] == "running", f"the crawl does not get going: {s}")

    # --- the policy: less polite refused (nothing changed), politer applied
    h0 = call_json(base, "GET", f"/hosts/{policy_host}")
    error(base, "POST", f"/hosts/{policy_host}/policy", 400, "crawl_delay_ms", "politer",
          body={"crawl_delay_ms": 10})
    error(base, "POST", f"/hosts/{policy_host}/policy", 400, "max_concurrent",
          body={"max_concurrent": 2})
    h1 = call_json(base, "GET", f"/hosts/{policy_host}")
    ok(h1["policy"] == h0["policy"], f"a refused policy changed it: {h0['policy']} -> {h1['policy']}")
    st["policy_sent_us"] = now_us()
    r = call_json(base, "POST", f"/hosts/{policy_host}/policy", {"crawl_delay_ms": 1500})
    st["policy_applied_us"] = now_us()
    ok(r == {"applied": True}, f"policy answer {r}")
    h2 = call_json(base, "GET", f"/hosts/{policy_host}")
    ok(h2["policy"].get("crawl_delay_ms") == 1500, f"policy after POST: {h2['policy']}")
    print(f"  ok POST /hosts/{policy_host}/policy crawl_delay_ms 1500: {h2['policy']}")
    # A field left out keeps its value.
    r = call_json(base, "POST", f"/hosts/{policy_host}/policy", {"weight": 0.5})
    h3 = call_json(base, "GET", f"/hosts/{policy_host}")
    ok(h3["policy"].get("crawl_delay_ms") == 1500, f"weight-only policy reset the delay: {h3}")
    ok(h3["policy"].get("weight") == 0.5, f"weight not applied: {h3['policy']}")

    # --- POST /seeds: the left-out host
    root = f"http://{inject_host}/"
    error(base, "GET", f"/hosts/{inject_host}", 404, inject_host)
    r = call_json(base, "POST", "/seeds", {"urls": [root], "priority": 1})
    st["seed_us"] = now_us()
    ok(r.get("queued") == 1 and r.get("rejected") == [], f"POST /seeds {root}: {r}")
    r2 = call_json(base, "POST", "/seeds", {"urls": [root]})
    ok(r2.get("queued") == 0 and len(r2.get("rejected", [])) == 1
       and r2["rejected"][0].get("url") == root and r2["rejected"][0].get("reason"),
       f"the same seed again: {r2}")
    print(f"  ok POST /seeds {root}: {r}; again: {r2}")

    # --- pause / resume
    r = call_json(base, "POST", "/pause")
    st["pause_us"] = now_us()
    ok(r == {"paused": True}, f"POST /pause: {r}")
    s = call_json(base, "GET", "/status")
    ok(s["state"] == "paused", f"/status state while paused: {s['state']}")
    time.sleep(2.0)
    s = call_json(base, "GET", "/status")
    ok(s["state"] == "paused", f"/status state while paused: {s['state']}")
    st["resume_us"] = now_us()
    r = call_json(base, "POST", "/resume")
    ok(r == {"paused": False}, f"POST /resume: {r}")
    s = call_json(base, "GET", "/status")
    ok(s["state"] == "running", f"/status state after resume: {s['state']}")
    print("  ok POST /pause, 2 s paused, POST /resume")

    # --- GET /hosts/{h}, block / unblock
    h = call_json(base, "GET", f"/hosts/{block_host}")
    for f in ("host", "policy", "robots", "queue_length", "counters", "recent_errors"):
        ok(f in h, f"GET /hosts/{block_host} lacks {f}: {h}")
    ok(host_of(h["host"]) == block_host, f"GET /hosts/{block_host} host {h['host']}")
    ok(isinstance(h["policy"], dict) and isinstance(h["robots"], dict)
       and isinstance(h["counters"], dict) and isinstance(h["recent_errors"], list)
       and is_int(h["queue_length"]), f"GET /hosts/{block_host} types: {h}")
    print(f"  ok GET /hosts/{block_host}: queue_length {h['queue_length']}, counters {h['counters']}")
    r = call_json(base, "PUT", f"/hosts/{block_host}/block")
    st["block_us"] = now_us()
    ok(r == {"host": block_host, "blocked": True}, f"PUT block: {r}")
    ok(call_json(base, "GET", f"/hosts/{block_host}").get("blocked") is True, "not blocked")
    ok(call_json(base, "GET", "/status")["hosts"]["blocked"] >= 1, "/status hosts.blocked is 0")
    time.sleep(1.0)
    st["unblock_us"] = now_us()
    r = call_json(base, "DELETE", f"/hosts/{block_host}/block")
    ok(r == {"host": block_host, "blocked": False}, f"DELETE block: {r}")
    ok(call_json(base, "GET", f"/hosts/{block_host}").get("blocked") is False, "still blocked")
    print(f"  ok PUT / DELETE /hosts/{block_host}/block")

    # --- bad input, every endpoint; nothing changes
    print("  bad inputs:")
    unknown = "not-in-this-crawl.test"
    big = b'{"urls": ["http://' + b"a" * (1 << 20) + b'.test/"]}'
    e = error
    e(base, "POST", "/seeds", 400, "json", raw=b'{"urls": ["http://x.test/"')
    e(base, "POST", "/seeds", 400, "object", raw=b'["http://x.test/"]')
    e(base, "POST", "/seeds", 400, "prio", body={"urls": [f"http://{unknown}/"], "prio": 1})
    e(base, "POST", "/seeds", 400, "a.test/x", body={"urls": [f"http://{unknown}/", "a.test/x"]})
    e(base, "POST", "/seeds", 400, "ftp://", body={"urls": [f"ftp://{unknown}/"]})
    e(base, "POST", "/seeds", 400, "urls", body={"urls": []})
    e(base, "POST", "/seeds", 400, "urls", body={"priority": 1})
    e(base, "POST", "/seeds", 400, "urls", body={"urls": f"http://{unknown}/"})
    e(base, "POST", "/seeds", 400, "priority", body={"urls": [f"http://{unknown}/"], "priority": 5000})
    e(base, "POST", "/seeds", 413, "larger", raw=big)
    hdrs, _ = e(base, "GET", "/seeds", 405, "GET")
    ok("POST" in (hdrs.get("Allow") or ""), f"405 for GET /seeds: Allow {hdrs.get('Allow')}")
    pol = f"/hosts/{policy_host}/policy"
    e(base, "POST", pol, 400, "json", raw=b'{"crawl_delay_ms": ')
    e(base, "POST", pol, 400, "dealy_ms", body={"dealy_ms": 5000})
    e(base, "POST", pol, 400, "crawl_delay_ms", body={"crawl_delay_ms": "slow"})
    e(base, "POST", pol, 400, "crawl_delay_ms", body={"crawl_delay_ms": -1})
    e(base, "POST", pol, 400, "weight", body={"weight": 0})
    e(base, "POST", pol, 400, "empty", body={})
    e(base, "POST", pol, 400, "politer", body={"crawl_delay_ms": 100})
    e(base, "POST", f"/hosts/{unknown}/policy", 404, unknown, body={"crawl_delay_ms": 5000})
    e(base, "POST", pol, 413, "larger", raw=b'{"weight": 1' + b" " * (1 << 20) + b"}")
    e(base, "GET", pol, 405, "GET")
    e(base, "GET", f"/hosts/{unknown}", 404, unknown)
    e(base, "GET", "/hosts/bad%20host", 400, "host")
    e(base, "POST", f"/hosts/{block_host}", 405, "POST")
    e(base, "PUT", f"/hosts/{unknown}/block", 404, unknown)
    e(base, "DELETE", f"/hosts/{unknown}/block", 404, unknown)
    e(base, "POST", f"/hosts/{block_host}/block", 405, "POST")
    e(base, "GET", "/pages?limit=0", 400, "limit")
    e(base, "GET", "/pages?limit=1001", 400, "limit")
    e(base, "GET", "/pages?limit=x", 400, "limit")
    e(base, "GET", "/pages?limit=1&limit=2", 400, "limit")
    e(base, "GET", "/pages?status=99", 400, "status")
    e(base, "GET", "/pages?since=yesterday", 400, "since")
    e(base, "GET", "/pages?colour=red", 400, "colour")
    e(base, "GET", "/pages?cursor=%25%25garbage", 400, "cursor")
    e(base, "POST", "/pages", 405, "POST", body={})
    e(base, "GET", "/pages/999999999", 404, "999999999")
    e(base, "GET", "/pages/999999999/content", 404, "999999999")
    e(base, "GET", "/pages/abc", 400, "abc")
    e(base, "DELETE", "/pages/1", 405, "DELETE")
    e(base, "GET", "/pause", 405, "GET")
    e(base, "GET", "/resume", 405, "GET")
    e(base, "POST", "/status", 405, "POST", body={})
    e(base, "POST", "/metrics", 405, "POST", body={})
    e(base, "GET", "/no-such-endpoint.html", 404, "")
    # Nothing changed: the policy is the last applied one, the refused seeds' host unknown.
    ok(call_json(base, "GET", f"/hosts/{policy_host}")["policy"].get("crawl_delay_ms") == 1500,
       "a refused policy changed the delay")
    error(base, "GET", f"/hosts/{unknown}", 404, unknown)
    st["unknown_host"] = unknown

    # --- pages, metrics, dashboard
    check_pages(base, policy_host)
    status, hdrs, body = call(base, "GET", "/metrics")
    ok(status == 200, f"/metrics -> {status}")
    ok(hdrs.get("Content-Type", "").startswith("text/plain; version=0.0.4"),
       f"/metrics Content-Type {hdrs.get('Content-Type')}")
    open(metrics_out, "wb").write(body)
    names = {line.split(" ")[2] for line in body.decode().splitlines()
             if line.startswith("# TYPE ")}
    # The issue's families (errors by kind, harvest_fetch_errors_total, appears with the
    # first failed fetch; this crawl has none).
    for n in ("harvest_fetches_total", "harvest_downloaded_bytes_total",
              "harvest_fetch_duration_seconds", "harvest_queue_depth", "harvest_hosts",
              "harvest_politeness_wait_seconds_total", "harvest_robots_outcomes_total",
              "harvest_dedup_hits_total", "harvest_retries_total", "harvest_dns_lookups_total"):
        ok(n in names, f"/metrics lacks {n}: {sorted(names)}")
    print(f"  ok /metrics: {len(names)} families: {' '.join(sorted(names))}")
    status, hdrs, body = call(base, "GET", "/")
    ok(status == 200 and hdrs.get("Content-Type", "").startswith("text/html"),
       f"GET / -> {status} {hdrs.get('Content-Type')}")
    ok(b"Harvest dashboard" in body and b'id="chart-pages"' in body, "GET / is not the dashboard")
    print(f"  ok GET / (dashboard, {len(body)} bytes)")
    json.dump(st, open(state_path, "w"))
    print(f"live checks passed ({checks} checks)")


def log_check(log_path, state_path, delay_ms):
    st = json.load(open(state_path))
    args = sys.argv[5:]
    policy_host, inject_host, block_host = args
    reqs = [json.loads(l) for l in open(log_path, encoding="utf-8") if l.strip()]
    reqs.sort(key=lambda r: r["start_us"])
    by_host = {}
    for r in reqs:
        by_host.setdefault(r["host"].lower().split(":")[0], []).append(r)

    # The policy: every gap after it (previous request ended after the 200) >= 1500 ms.
    tol_us = 5_000
    rs = by_host.get(policy_host, [])
    after, before = [], []
    for prev, nxt in zip(rs, rs[1:]):
        gap = nxt["start_us"] - prev["end_us"]
        (after if prev["end_us"] >= st["policy_applied_us"] else before).append(gap)
    ok(len(after) >= 3, f"only {len(after)} requests to {policy_host} after the policy")
    ok(min(after) >= 1_500_000 - tol_us,
       f"{policy_host}: a gap of {min(after) / 1000:.3f} ms after crawl_delay_ms 1500 was applied")
    # The other hosts were crawled faster: the policy made the difference.
    others = []
    for h, hrs in by_host.items():
        if h != policy_host:
            others += [b["start_us"] - a["end_us"] for a, b in zip(hrs, hrs[1:])]
    others.sort()
    median = others[len(others) // 2] if others else 0
    ok(others and median < 1_000_000,
       f"the other hosts' median gap is {median / 1000:.3f} ms: the policy check proves nothing")
    print(f"  ok {policy_host}: {len(after)} gaps after the policy, min "
          f"{min(after) / 1000:.3f} ms (>= 1500 ms); the other hosts' median gap "
          f"{median / 1000:.3f} ms (delay {delay_ms} ms)")

    # The injected host was crawled, after the injection.
    rs = [r for r in by_host.get(inject_host, []) if r.get("kind") != "robots"]
    ok(rs, f"the injected host {inject_host} was never requested")
    ok(rs[0]["start_us"] >= st["seed_us"] - 1_000_000,
       f"{inject_host} requested before its seed was injected")
    ok(any(r["path"] == "/" and r["status"] == 200 for r in rs), f"{inject_host}/ not fetched")
    print(f"  ok injected {inject_host}: {len(rs)} page requests")

    # Pause: no request started while paused; some before and after. A request the crawl
    # started before the pause took effect may reach the test web (its start_us) a little
    # later on a loaded machine: up to IN_FLIGHT_US after the pause's answer it counts as in
    # flight at pause time.
    during = [r for r in reqs if st["pause_us"] + IN_FLIGHT_US < r["start_us"] < st["resume_us"]]
    ok(not during, f"{len(during)} requests started while paused, e.g. {during[:3]}")
    late = [r for r in reqs if st["pause_us"] < r["start_us"] <= st["pause_us"] + IN_FLIGHT_US]
    if late:
        print(f"  ({len(late)} request(s) in flight at the pause reached the test web up to "
              f"{max(r['start_us'] - st['pause_us'] for r in late) / 1000:.1f} ms after it)")
    before_pause = [r for r in reqs if st["pause_us"] - 2_000_000 < r["start_us"] <= st["pause_us"]]
    ok(before_pause, "no request in the 2 s before the pause: the pause check proves nothing")
    after_resume = [r for r in reqs if r["start_us"] >= st["resume_us"]]
    ok(after_resume, "no request after the resume")
    print(f"  ok pause: 0 requests started in the {(st['resume_us'] - st['pause_us']) / 1e6:.2f} s "
          f"paused ({len(before_pause)} in the 2 s before, first after resume "
          f"{(after_resume[0]['start_us'] - st['resume_us']) / 1000:.1f} ms later)")

    # Block: no request to the blocked host started while blocked.
    during = [r for r in by_host.get(block_host, [])
              if st["block_us"] + IN_FLIGHT_US < r["start_us"] < st["unblock_us"]]
    ok(not during, f"{len(during)} requests to blocked {block_host} while blocked: {during[:3]}")
    print(f"  ok block: no request to {block_host} while blocked")

    # A refused request changed nothing: its URLs were never crawled.
    ok(st["unknown_host"] not in by_host, f"{st['unknown_host']} from a refused request was crawled")
    print(f"log checks passed ({checks} checks)")


def serve(base):
    s = call_json(base, "GET", "/status")
    check_status_shape(s)
    ok(s["state"] == "complete", f"harvest serve /status state {s['state']}")
    ok(s["pages_stored"] > 0, f"harvest serve pages_stored {s['pages_stored']}")
    for method, path, body in (("POST", "/pause", None), ("POST", "/resume", None),
                               ("POST", "/seeds", {"urls": ["http://h0000.test/x"]}),
                               ("POST", "/hosts/h0000.test/policy", {"crawl_delay_ms": 5000}),
                               ("PUT", "/hosts/h0000.test/block", None),
                               ("DELETE", "/hosts/h0000.test/block", None)):
        error(base, method, path, 409, "read-only", body=body)
    # Every stored page, by cursor: distinct ids.
    seen, cursor, rounds = set(), None, 0
    while True:
        q = "/pages?limit=100" + (f"&cursor={urllib.parse.quote(cursor)}" if cursor else "")
        a = call_json(base, "GET", q)
        for p in a["pages"]:
            check_page(p)
            ok(p["id"] not in seen, f"page {p['id']} listed twice")
            seen.add(p["id"])
        cursor, rounds = a["next_cursor"], rounds + 1
        if cursor is None:
            break
        ok(rounds < 10000, "/pages paging does not end")
    ok(len(seen) > 100, f"harvest serve lists {len(seen)} pages")
    first = call_json(base, "GET", f"/pages/{min(seen)}")
    check_page(first)
    print(f"  ok harvest serve: complete, 409 read-only, /pages lists {len(seen)} pages in "
          f"{rounds} pages of 100 (pages_stored {s['pages_stored']})")
    print(f"serve checks passed ({checks} checks)")


def token(base, tok):
    error(base, "GET", "/status", 401, "token")
    error(base, "GET", "/status", 401, "token", headers={"Authorization": "Bearer x" + tok})
    error(base, "GET", "/", 401, "token")
    s = call_json(base, "GET", "/status", headers={"Authorization": "Bearer " + tok})
    check_status_shape(s)
    status, _, body = call(base, "GET", "/", headers={"Authorization": "Bearer " + tok})
    ok(status == 200 and b"Harvest dashboard" in body, f"GET / with the token -> {status}")
    print(f"token checks passed ({checks} checks)")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "live":
        live(*sys.argv[2:8])
    elif cmd == "log":
        log_check(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif cmd == "serve":
        serve(sys.argv[2])
    elif cmd == "token":
        token(sys.argv[2], sys.argv[3])
    else:
        fail(f"unknown subcommand {cmd}")

"""Shared by check_crawl.py and check_fault.py: every outcome has a reason.

Every line of outcomes.jsonl whose outcome is not `fetched` or `revisit` must say why in a
non-empty `detail` (docs/crawling.md, "Outcomes").
"""


def missing_details(outcomes, path, examples=5):
    """Returns None when every outcome but fetched/revisit has a detail, else a message with
    the count per outcome and the first few offenders (line numbers of `path`)."""
    counts = {}
    offenders = []
    for n, o in enumerate(outcomes, 1):
        if o.get("outcome") in ("fetched", "revisit"):
            continue
        if not str(o.get("detail") or "").strip():
            counts[o.get("outcome")] = counts.get(o.get("outcome"), 0) + 1
            if len(offenders) < examples:
                offenders.append(f'line {n}: {o.get("outcome")} {o.get("url")}')
    if not counts:
        return None
    per_outcome = ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=str))
    return (f"{sum(counts.values())} outcomes in {path} have no detail (reason): {per_outcome}; "
            "e.g. " + "; ".join(offenders))

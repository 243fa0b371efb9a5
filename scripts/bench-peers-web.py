#!/usr/bin/env python3
"""Static test web for scripts/bench-peers (docs/benchmarks.md, "Peers").

Writes OUT/www/<host>/ for HOSTS hosts named h0000.DOMAIN, h0001.DOMAIN, ..., each with PAGES
HTML pages (page 0 is "/" = index.html, page i is /p/i.html) and a permissive robots.txt,
plus OUT/seeds.txt (every host's root, http://<host>:PORT/) and OUT/hosts.txt (the names).

Deterministic for a given --seed. Each page is 8-26 KB of text (17 KB on average) with about
20 links: the binary-tree children 2i+1 and 2i+2 (so every page is reachable from the root
within log2(PAGES) steps), the next page, about 13 more pages of the same host and 4 pages of
other hosts (20%). Same-host links are root-relative; links to other hosts are absolute and
carry PORT, which is why the web is generated for the port the server listens on.
"""
import argparse
import os
import random


def words(rng, n):
    letters = "etaoinshrdlucmfwypvbgkjqxz"
    weights = [12, 9, 8, 7, 7, 6, 6, 6, 5, 4, 4, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    out = set()
    while len(out) < n:
        out.add("".join(rng.choices(letters, weights, k=rng.randint(2, 10))))
    return sorted(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--pages", type=int, default=50)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--domain", default="peers.test")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.hosts < 1 or a.pages < 1:
        ap.error("--hosts and --pages must be at least 1")

    rng = random.Random(a.seed)
    vocab = words(rng, 6000)
    # A pool of paragraphs (~300-900 bytes); a page draws ~25 of 3,000, so two pages share
    # few paragraphs and are not near-duplicates of each other.
    pool = []
    for _ in range(3000):
        sentences = []
        for _ in range(rng.randint(3, 8)):
            s = " ".join(rng.choices(vocab, k=rng.randint(6, 16)))
            sentences.append(s[0].upper() + s[1:] + ".")
        pool.append(" ".join(sentences))

    names = [f"h{i:04d}.{a.domain}" for i in range(a.hosts)]
    www = os.path.join(a.out, "www")
    os.makedirs(www, exist_ok=True)

    def path(i):
        return "/" if i == 0 else f"/p/{i}.html"

    total = 0
    for h, name in enumerate(names):
        hr = random.Random(a.seed * 1_000_003 + h)
        root = os.path.join(www, name)
        os.makedirs(os.path.join(root, "p"), exist_ok=True)
        with open(os.path.join(root, "robots.txt"), "w") as f:
            f.write("User-agent: *\nDisallow:\n")
        for i in range(a.pages):
            links = []
            for j in (2 * i + 1, 2 * i + 2, i + 1):
                if j < a.pages:
                    links.append(path(j))
            while len(links) < 16:
                links.append(path(hr.randrange(a.pages)))
            if a.hosts > 1:
                for _ in range(4):
                    o = hr.randrange(a.hosts - 1)
                    o += o >= h
                    links.append(f"http://{names[o]}:{a.port}{path(hr.randrange(a.pages))}")
            target = hr.randint(8 * 1024, 26 * 1024)
            title = f"{name} page {i}"
            parts = [
                f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title>"
                f"</head>\n<body>\n<h1>{title}</h1>\n<ul>\n"
            ]
            for k, url in enumerate(links[:8]):
                parts.append(f"<li><a href=\"{url}\">{hr.choice(vocab)} {k}</a></li>\n")
            parts.append("</ul>\n")
            size = sum(len(p) for p in parts)
            rest = links[8:]
            while size < target:
                p = hr.choice(pool)
                if rest:
                    url = rest.pop()
                    w = hr.choice(vocab)
                    p = f"{p} See <a href=\"{url}\">{w}</a>."
                p = f"<p>{p}</p>\n"
                parts.append(p)
                size += len(p)
            for url in rest:  # pages shorter than their links need
                parts.append(f"<p><a href=\"{url}\">more</a></p>\n")
            parts.append("</body></html>\n")
            body = "".join(parts)
            total += len(body)
            fn = "index.html" if i == 0 else os.path.join("p", f"{i}.html")
            with open(os.path.join(root, fn), "w") as f:
                f.write(body)

    with open(os.path.join(a.out, "seeds.txt"), "w") as f:
        f.writelines(f"http://{n}:{a.port}/\n" for n in names)
    with open(os.path.join(a.out, "hosts.txt"), "w") as f:
        f.writelines(n + "\n" for n in names)
    n = a.hosts * a.pages
    print(f"web: {a.hosts} hosts x {a.pages} pages = {n} pages, {total / n / 1024:.1f} KB "
          f"per page on average, {total / 1048576:.0f} MiB")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Appends the first half of a copy of one gzip member (a WARC record) to the newest WARC of
a crawl directory: what a kill -9 in the middle of an append leaves behind. Prints what it did."""
import glob
import os
import sys
import zlib

warcs = sorted(glob.glob(os.path.join(sys.argv[1], "*.warc.gz")))
if not warcs:
    sys.exit("tear_warc_tail: no WARC file")
path = warcs[-1]
data = open(path, "rb").read()
# Skip the warcinfo member; tear a copy of the record after it.
d = zlib.decompressobj(31)
d.decompress(data)
first = len(data) - len(d.unused_data)
d = zlib.decompressobj(31)
d.decompress(data[first:])
second = len(data) - first - len(d.unused_data)
if second < 2:
    sys.exit("tear_warc_tail: no record after warcinfo")
with open(path, "ab") as f:
    f.write(data[first:first + second // 2])
print(f"tore {os.path.basename(path)}: appended {second // 2} bytes of a {second}-byte member")

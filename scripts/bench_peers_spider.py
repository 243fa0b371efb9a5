"""Scrapy spider for scripts/bench-peers (docs/benchmarks.md, "Peers").

Run with: scrapy runspider scripts/bench_peers_spider.py -a seeds=FILE -a out=DIR
          -a domain=peers.test [-s CLOSESPIDER_PAGECOUNT=N]
Follows every link within DOMAIN from the seeds and stores each fetched body under OUT (one
file per response, named by a hash of its URL) - a crawler keeps what it fetched. Politeness
as Harvest's: robots.txt obeyed, one request in flight per host, no delay, no per-IP limit.
"""
import hashlib
import os

from scrapy import Request
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class PeersSpider(CrawlSpider):
    name = "bench_peers"
    custom_settings = {
        "ROBOTSTXT_OBEY": True,
        "CONCURRENT_REQUESTS": 64,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "CONCURRENT_REQUESTS_PER_IP": 0,
        "DOWNLOAD_DELAY": 0,
        "RANDOMIZE_DOWNLOAD_DELAY": False,
        "AUTOTHROTTLE_ENABLED": False,
        "DEPTH_LIMIT": 0,
        "COOKIES_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "WARNING",
        "USER_AGENT": "bench-peers-scrapy",
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }

    def __init__(self, seeds=None, out=None, domain="peers.test", *args, **kwargs):
        with open(seeds) as f:
            self.start_urls = [line.strip() for line in f if line.strip()]
        self.allowed_domains = [domain]
        # The offsite middleware keeps the crawl within allowed_domains. (LinkExtractor's
        # allow_domains compares the whole netloc, port included, so it would drop every link.)
        self.rules = (Rule(LinkExtractor(), callback="save", follow=True),)
        self.out = out
        os.makedirs(out, exist_ok=True)
        super().__init__(*args, **kwargs)

    def start_requests(self):
        # Through the duplicate filter (Scrapy's default start requests bypass it), so that a
        # link back to a root does not fetch it a second time.
        for url in self.start_urls:
            yield Request(url, dont_filter=False)

    def save(self, response):
        name = hashlib.sha1(response.url.encode()).hexdigest()
        with open(os.path.join(self.out, name), "wb") as f:
            f.write(response.body)

    def parse_start_url(self, response):
        self.save(response)
        return []

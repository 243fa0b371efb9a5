#!/usr/bin/env node
// Checks a continuous crawl (docs/freshness.md) against the test web's request log with
// warcio, an independent WARC reader:
//   - every 304 the test web sent for a page is a server-not-modified revisit record of that
//     URL (counts per URL equal), and every such revisit refers to a stored response;
//   - every 200 it sent for a page is stored: a response record, or an identical-payload
//     revisit (counts per URL equal);
//   - every URL of a page the manifest lists as changing was stored in at least two versions
//     (payload digests: its new editions), every other URL in exactly one (its refetches were
//     304s or identical payloads); no payload is stored twice as a response;
//   - every page URL was requested at least twice, and some requests were conditional.
// Usage: node check_recrawl.js CRAWL_DIR REQUEST_LOG MANIFEST
'use strict';

const fs = require('fs');
const path = require('path');

const NOT_MODIFIED = 'http://netpreserve.org/warc/1.1/revisit/server-not-modified';
const IDENTICAL = 'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest';
// sha256 of the empty payload, base32.
const EMPTY_SHA256 = 'sha256:4OYMIQUY7QOBJGX36TEJS35ZEQT24QPEMSNZGTFESWMRW6CSXBKQ====';

function fail(msg) {
  console.error('check_recrawl: FAIL: ' + msg);
  process.exitCode = 1;
}

async function main() {
  const [dir, logPath, manifestPath] = process.argv.slice(2);
  if (!manifestPath) {
    console.error('usage: check_recrawl.js CRAWL_DIR REQUEST_LOG MANIFEST');
    process.exit(2);
  }
  const { WARCParser } = await import('warcio');
  const byUrl = new Map();  // url -> {responses, notModified, identical, digests}
  const entry = (u) => {
    if (!byUrl.has(u)) {
      byUrl.set(u, { responses: 0, notModified: 0, identical: 0, digests: new Set() });
    }
    return byUrl.get(u);
  };
  const responseUris = new Set();
  const responseDigests = new Map();  // digest -> response records
  const notModifiedRefs = [];
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.warc.gz')).sort();
  for (const f of files) {
    const parser = new WARCParser(fs.createReadStream(path.join(dir, f)), { parseHttp: true });
    for await (const record of parser) {
      const type = record.warcType;
      const uri = record.warcTargetURI;
      const digest = record.warcHeaders.headers.get('WARC-Payload-Digest');
      if (type === 'response') {
        const e = entry(uri);
        e.responses++;
        e.digests.add(digest);
        responseUris.add(uri);
        // Empty payloads (redirects: over https, every http:// URL's 301) are all alike: the
        // crawler stores one per URL, later ones as revisits of it (WarcSink).
        const key = digest === EMPTY_SHA256 ? `${digest} of ${uri}` : digest;
        responseDigests.set(key, (responseDigests.get(key) || 0) + 1);
      } else if (type === 'revisit') {
        const profile = record.warcHeaders.headers.get('WARC-Profile');
        if (profile === NOT_MODIFIED) {
          entry(uri).notModified++;
          const status = record.httpHeaders ? Number(record.httpHeaders.statusCode) : 0;
          if (status !== 304) fail(`${uri}: server-not-modified revisit with HTTP status ${status}`);
          notModifiedRefs.push([uri, record.warcHeaders.headers.get('WARC-Refers-To-Target-URI')]);
        } else if (profile === IDENTICAL) {
          const e = entry(uri);
          e.identical++;
          e.digests.add(digest);
        } else {
          fail(`${uri}: revisit with unknown profile ${profile}`);
        }
      }
    }
  }
  for (const [uri, ref] of notModifiedRefs) {
    if (!ref || !responseUris.has(ref)) fail(`${uri}: 304 revisit refers to ${ref}, not a stored response`);
  }
  for (const [digest, n] of responseDigests) {
    if (n > 1) fail(`payload ${digest} stored ${n} times as a response`);
  }

  // The manifest names changing pages by page identity; the log maps each URL requested to
  // its page identity (several URLs may name one page, e.g. with reordered queries).
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  const changing = new Set();
  for (const host of manifest.hosts) for (const id of host.changing || []) changing.add(id);
  const log = new Map();  // url -> {ok, notModified, requests, page}
  let conditional = 0;
  let notModified = 0;
  for (const line of fs.readFileSync(logPath, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const r = JSON.parse(line);
    // Over https the test web answers plain http with a 301 to https:// (upgrade): those
    // are not fetches of the page.
    if (r.kind !== 'page' || r.upgrade) continue;
    const url = (r.scheme || 'http') + '://' + r.host + r.path;
    if (!log.has(url)) log.set(url, { ok: 0, notModified: 0, requests: 0, page: r.page });
    const l = log.get(url);
    l.requests++;
    if (r.status === 200) l.ok++;
    if (r.status === 304) { l.notModified++; notModified++; }
    if (r.cond) conditional++;
  }
  if (conditional === 0) fail('no conditional request in the log');
  if (notModified === 0) fail('no 304 in the log');
  let changed = 0;
  let stable = 0;
  for (const [url, l] of log) {
    const w = byUrl.get(url) || { responses: 0, notModified: 0, identical: 0, digests: new Set() };
    if (w.notModified !== l.notModified) {
      fail(`${url}: ${l.notModified} answers 304 but ${w.notModified} server-not-modified revisits`);
    }
    if (w.responses + w.identical !== l.ok) {
      fail(`${url}: ${l.ok} answers 200 but ${w.responses} responses + ${w.identical} revisits`);
    }
    if (l.requests < 2) fail(`${url}: requested ${l.requests} time(s), expected at least 2`);
    // Changing pages: a new edition is a new payload (stored once, as a response, wherever
    // it was first seen); a stable page keeps one payload.
    // A page's query variants (?print=1, reordered parameters) carry its content.
    const base = (l.page || '').split('?')[0];
    if (changing.has(l.page) || changing.has(base)) {
      changed++;
      if (w.digests.size < 2) fail(`${url} (${l.page}) changes but only ${w.digests.size} version(s) stored`);
    } else {
      stable++;
      if (w.digests.size !== 1) fail(`${url} (${l.page}) never changes but ${w.digests.size} versions stored`);
    }
  }
  if (changed === 0) fail('no changing page was crawled');
  console.log(`check_recrawl: ${log.size} page URLs, ${conditional} conditional requests, ` +
              `${notModified} 304s (each a server-not-modified revisit), ${changed} URLs of ` +
              `changing pages stored in new versions, ${stable} of stable pages stored once`);
}

main().catch((e) => {
  console.error('check_recrawl: ' + (e.stack || e));
  process.exit(1);
});

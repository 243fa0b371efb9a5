#!/usr/bin/env node
// Independent WARC checker: reads every record of the given WARC files (and of every
// *.warc / *.warc.gz under the given directories) with warcio (npm, webrecorder) and
// verifies, with Node's own crypto and shares no code with Harvest:
//   - every record parses (warcio's WARCParser, gzip members or plain), a .warc.gz is a
//     complete gzip stream (Node's zlib; catches a torn last member, which warcio skips)
//     and warcio's records cover the whole file;
//   - WARC-Block-Digest matches the block bytes (sha1/sha256/sha512/md5; base32 padded or
//     unpadded, or hex);
//   - WARC-Payload-Digest matches the HTTP payload (block after the HTTP head) of
//     response/request/resource records; warcio's own HTTP parser must find the same head;
//   - each revisit's payload digest belongs to a response for WARC-Refers-To-Target-URI
//     among the files checked (unless --allow-external-revisits);
//   - every line of every *.cdxj file in the given directories (or given directly) points at
//     a record (filename, offset, length as warcio measures them) of that URL.
// Prints per-file counts and a summary; exits 1 on any failure (with a message per
// problem), 2 on usage errors.
//
// Usage: node tests/e2e/warcio_verify.js [--allow-external-revisits] [--min-records N]
//                                        [--quiet] FILE_OR_DIR...
'use strict';

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const zlib = require('zlib');
const { pipeline } = require('stream/promises');
const { Writable } = require('stream');

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function base32(buf) {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  return out;
}

const ALGOS = { sha1: 'sha1', sha256: 'sha256', sha512: 'sha512', md5: 'md5' };

// Returns null when `digest` ("algo:value") matches `bytes`, else a reason.
function checkDigest(digest, bytes) {
  const colon = digest.indexOf(':');
  if (colon < 0) return `malformed digest '${digest}'`;
  const algo = ALGOS[digest.slice(0, colon).toLowerCase()];
  if (!algo) return `unsupported digest algorithm in '${digest}'`;
  const value = digest.slice(colon + 1);
  const raw = crypto.createHash(algo).update(bytes).digest();
  const b32 = base32(raw);
  if (value.replace(/=+$/, '').toUpperCase() === b32) return null;
  if (value.toLowerCase() === raw.toString('hex')) return null;
  return `digest mismatch: header ${digest}, computed ${digest.slice(0, colon)}:${b32}`;
}

function findHeadEnd(buf) {
  const i = buf.indexOf('\r\n\r\n');
  if (i >= 0) return i + 4;
  const j = buf.indexOf('\n\n');
  return j >= 0 ? j + 2 : -1;
}

function walk(p, warcs, cdxjs) {
  const st = fs.statSync(p);
  if (st.isDirectory()) {
    for (const name of fs.readdirSync(p).sort()) walk(path.join(p, name), warcs, cdxjs);
  } else if (/\.warc(\.gz)?$/.test(p)) {
    warcs.push(p);
  } else if (/\.cdxj$/.test(p)) {
    cdxjs.push(p);
  }
}

async function main() {
  const { WARCParser } = await import('warcio');
  const args = process.argv.slice(2);
  let allowExternal = false;
  let minRecords = 0;
  let quiet = false;
  const inputs = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--allow-external-revisits') allowExternal = true;
    else if (args[i] === '--quiet') quiet = true;
    else if (args[i] === '--min-records') minRecords = Number(args[++i]);
    else if (args[i].startsWith('--')) {
      console.error(`warcio_verify: unknown option ${args[i]}`);
      process.exit(2);
    } else inputs.push(args[i]);
  }
  if (inputs.length === 0) {
    console.error('usage: warcio_verify.js [--allow-external-revisits] [--min-records N] FILE_OR_DIR...');
    process.exit(2);
  }
  const warcs = [];
  const cdxjs = [];
  for (const p of inputs) {
    if (!fs.existsSync(p)) {
      console.error(`warcio_verify: no such file or directory: ${p}`);
      process.exit(1);
    }
    walk(p, warcs, cdxjs);
  }

  // Nothing to read is a failure, not a vacuous pass (a crawl directory always holds a WARC).
  if (warcs.length === 0) {
    console.error(`warcio_verify: no *.warc or *.warc.gz file in ${inputs.join(' ')}`);
    process.exit(1);
  }

  const failures = [];
  const fail = (msg) => failures.push(msg);
  const totals = { files: 0, records: 0, blockDigests: 0, payloadDigests: 0, revisits: 0,
                   cdxjLines: 0 };
  const byType = {};
  const responsesByUri = new Map();  // uri -> Set(payload digest)
  const revisits = [];
  const locations = new Map();       // absolute path -> Map(offset -> {uri, length, type})

  for (const file of warcs) {
    totals.files++;
    let count = 0;
    const locs = new Map();
    let lastEnd = 0;
    locations.set(path.resolve(file), locs);
    // Pass 1: raw blocks (no HTTP parsing) for the block and payload digests.
    try {
      const parser = new WARCParser(fs.createReadStream(file), { parseHttp: false });
      for await (const record of parser) {
        const where = `${file}: offset ${parser.offset}`;
        const block = Buffer.from(await record.readFully(false));
        count++;
        const type = record.warcType || '(none)';
        byType[type] = (byType[type] || 0) + 1;
        const uri = record.warcTargetURI || '';
        locs.set(parser.offset, { uri, length: parser.recordLength, type });
        lastEnd = parser.offset + parser.recordLength;
        const declared = Number(record.warcHeaders.headers.get('Content-Length'));
        if (declared !== block.length) {
          fail(`${where}: block is ${block.length} bytes, Content-Length says ${declared}`);
        }
        const blockDigest = record.warcHeaders.headers.get('WARC-Block-Digest');
        if (blockDigest) {
          const err = checkDigest(blockDigest, block);
          if (err) fail(`${where} (${type} ${uri}): WARC-Block-Digest ${err}`);
          totals.blockDigests++;
        } else if (type !== 'warcinfo') {
          fail(`${where} (${type} ${uri}): no WARC-Block-Digest`);
        }
        const payloadDigest = record.warcHeaders.headers.get('WARC-Payload-Digest');
        const ctype = (record.warcHeaders.headers.get('Content-Type') || '').toLowerCase();
        if (type === 'revisit') {
          totals.revisits++;
          revisits.push({ where, uri, digest: payloadDigest,
                          refersTo: record.warcHeaders.headers.get('WARC-Refers-To-Target-URI') });
          if (!payloadDigest) fail(`${where}: revisit without WARC-Payload-Digest`);
        } else if (payloadDigest) {
          let payload = block;
          if (ctype.startsWith('application/http')) {
            const end = findHeadEnd(block);
            if (end < 0) {
              fail(`${where}: HTTP head not terminated`);
              continue;
            }
            payload = block.subarray(end);
          }
          const err = checkDigest(payloadDigest, payload);
          if (err) fail(`${where} (${type} ${uri}): WARC-Payload-Digest ${err}`);
          totals.payloadDigests++;
          if (type === 'response') {
            if (!responsesByUri.has(uri)) responsesByUri.set(uri, new Set());
            responsesByUri.get(uri).add(payloadDigest);
          }
        } else if (type === 'response') {
          fail(`${where} (${uri}): response without WARC-Payload-Digest`);
        }
      }
    } catch (e) {
      fail(`${file}: warcio failed to read: ${e && e.message ? e.message : e}`);
    }
    // Pass 2: warcio's own HTTP parsing must accept every request/response/revisit head.
    try {
      const parser = new WARCParser(fs.createReadStream(file), { parseHttp: true });
      for await (const record of parser) {
        const t = record.warcType;
        if (t === 'response' || t === 'revisit') {
          const sc = record.httpHeaders ? Number(record.httpHeaders.statusCode) : NaN;
          if (!(sc >= 100 && sc <= 999)) {
            fail(`${file}: offset ${parser.offset}: warcio found no HTTP status in ${t}`);
          }
          if (record.httpHeaders && record.httpHeaders.headers.get('transfer-encoding')) {
            fail(`${file}: offset ${parser.offset}: stored head still has Transfer-Encoding`);
          }
        }
        await record.readFully(false);
      }
    } catch (e) {
      fail(`${file}: warcio failed to parse HTTP: ${e && e.message ? e.message : e}`);
    }
    // A torn (truncated) last gzip member is silently dropped by warcio: check the whole
    // file with Node's own zlib, and that warcio's records end where the file ends.
    if (file.endsWith('.gz')) {
      try {
        await pipeline(fs.createReadStream(file), zlib.createGunzip(),
                       new Writable({ write(chunk, enc, cb) { cb(); } }));
      } catch (e) {
        fail(`${file}: not a complete gzip stream: ${e.message}`);
      }
    }
    if (lastEnd !== fs.statSync(file).size && file.endsWith('.gz')) {
      fail(`${file}: records end at ${lastEnd}, file has ${fs.statSync(file).size} bytes`);
    }
    if (count === 0) fail(`${file}: no records`);
    totals.records += count;
    if (!quiet) console.log(`${file}: ${count} records`);
  }

  for (const r of revisits) {
    const digests = responsesByUri.get(r.refersTo || '');
    if (!digests || !digests.has(r.digest)) {
      const msg = `${r.where} (revisit ${r.uri}): no response for ${r.refersTo} with ${r.digest}`;
      if (allowExternal) { if (!quiet) console.log(`note: ${msg}`); } else fail(msg);
    }
  }

  for (const cdxj of cdxjs) {
    const lines = fs.readFileSync(cdxj, 'utf8').split('\n').filter((l) => l.length > 0);
    lines.forEach((line, i) => {
      totals.cdxjLines++;
      const where = `${cdxj}:${i + 1}`;
      const m = /^(\S+) (\d{14}) (\{.*\})$/.exec(line);
      if (!m) return fail(`${where}: not a CDXJ line`);
      let j;
      try { j = JSON.parse(m[3]); } catch (e) { return fail(`${where}: bad JSON: ${e.message}`); }
      const locs = locations.get(path.resolve(path.dirname(cdxj), String(j.filename)));
      if (!locs) return fail(`${where}: filename ${j.filename} not among the WARCs checked`);
      const rec = locs.get(Number(j.offset));
      if (!rec) return fail(`${where}: no record at offset ${j.offset} of ${j.filename}`);
      if (rec.uri !== j.url) fail(`${where}: record at ${j.offset} is for ${rec.uri}, not ${j.url}`);
      if (Number(j.length) !== rec.length) {
        fail(`${where}: length ${j.length}, warcio measures ${rec.length}`);
      }
      const wantRevisit = j.mime === 'warc/revisit';
      if (wantRevisit !== (rec.type === 'revisit')) {
        fail(`${where}: mime ${j.mime} but record is ${rec.type}`);
      }
    });
  }

  if (totals.records < minRecords) {
    fail(`only ${totals.records} records, expected at least ${minRecords}`);
  }
  const types = Object.entries(byType).map(([k, v]) => `${k}=${v}`).join(' ');
  console.log(`warcio_verify: files=${totals.files} records=${totals.records} (${types}) ` +
              `block_digests=${totals.blockDigests} payload_digests=${totals.payloadDigests} ` +
              `revisits=${totals.revisits} cdxj_lines=${totals.cdxjLines} failures=${failures.length}`);
  if (failures.length > 0) {
    for (const f of failures.slice(0, 50)) console.error(`FAIL ${f}`);
    if (failures.length > 50) console.error(`... and ${failures.length - 50} more`);
    process.exit(1);
  }
}

main().catch((e) => {
  console.error(`warcio_verify: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});

#!/usr/bin/env node
// Browser test of the dashboard (docs/dashboard.md): headless Debian chromium driven by
// playwright-core, against a running crawl of the test web (5 hosts x 10 pages, --delay-ms
// 1000: the crawl runs ~30 s). It
//   - opens the dashboard at the crawl's --admin address and waits until every chart's
//     data-points attribute has grown by at least 2 (the charts update from GET /status);
//   - looks up a host in #host-search, tries a less polite delay (the page shows the server's
//     400 naming the rule in #policy-result), then a politer one (#policy-result says it was
//     applied), and checks through the API (GET /hosts/{host}) that the policy is in force;
//   - saves a screenshot to SCREENSHOT (non-empty PNG).
// Nothing is skipped: without chromium or playwright-core the test fails, saying what to
// install (scripts/bootstrap installs both).
// Usage: node dashboard_test.js HARVEST_BIN SCREENSHOT
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const CHROMIUM = process.env.HARVEST_CHROMIUM || '/usr/bin/chromium';
const HOST = 'h0001.test';
const DELAY_MS = 1000;
const POLITER_MS = 4000;

const children = [];
let tmp = null;

function fail(msg) {
  throw new Error(msg);
}

const t0 = Date.now();
function log(msg) {
  console.log(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${msg}`);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Starts `bin args...`, its stdout+stderr into FILE; resolves with the first match of `re`
// in that output (within 10 s).
async function start(bin, args, file, re) {
  const out = fs.openSync(file, 'w');
  const child = spawn(bin, args, { stdio: ['ignore', out, out] });
  children.push(child);
  let exited = null;
  child.on('exit', (code, signal) => { exited = signal || code; });
  for (let i = 0; i < 200; i++) {
    const m = fs.readFileSync(file, 'utf8').match(re);
    if (m) return { child, match: m };
    if (exited !== null) break;
    await sleep(50);
  }
  fail(`${path.basename(bin)} ${args[0]} did not start (exit ${exited}):\n` +
       fs.readFileSync(file, 'utf8'));
}

async function api(base, pathname) {
  const r = await fetch(base + pathname);
  const body = await r.json();
  if (r.status !== 200) fail(`GET ${pathname} -> ${r.status}: ${JSON.stringify(body)}`);
  return body;
}

async function main() {
  const [bin, screenshot] = process.argv.slice(2);
  if (!screenshot) {
    console.error('usage: dashboard_test.js HARVEST_BIN SCREENSHOT');
    process.exit(2);
  }
  let chromium;
  try {
    ({ chromium } = require('playwright-core'));
  } catch (e) {
    fail('playwright-core is missing: run `cd tests/e2e && npm install` (scripts/bootstrap ' +
         'does): ' + e.message);
  }
  if (!fs.existsSync(CHROMIUM)) {
    fail(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium; ` +
         'scripts/bootstrap does)');
  }

  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'harvest-e2e-dashboard.'));
  const web = await start(bin, ['testweb', '--listen', '127.0.0.1:0', '--hosts', '5',
    '--pages', '10', '--links', '5', '--no-hostile', '--cross-host-share', '0',
    '--crawl-delay-percent', '0', '--seeds', path.join(tmp, 'seeds.txt')],
    path.join(tmp, 'web.txt'), /listening on [0-9.]+:([0-9]+)/);
  const port = web.match[1];
  const crawl = await start(bin, ['crawl', '--seeds', path.join(tmp, 'seeds.txt'),
    '--out', path.join(tmp, 'crawl'), '--delay-ms', String(DELAY_MS),
    '--connect-to', `::127.0.0.1:${port}`, '--allow-address', '127.0.0.0/8', '--per-ip-limit', '0', '--no-progress',
    '--workers', '2', '--admin', '127.0.0.1:0'],
    path.join(tmp, 'crawl.txt'), /admin API listening on (http:\/\/[0-9.]+:[0-9]+)\//);
  const base = crawl.match[1];
  log(`crawl of 5 hosts x 10 pages (delay ${DELAY_MS} ms), admin API at ${base}`);

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--headless=new'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    // Script errors fail the test; failed requests are listed (the refused policy's 400 is
    // expected, and so is the browser's own /favicon.ico request, which the dashboard lacks).
    page.on('response', (resp) => {
      if (resp.status() >= 400) log(`  (${resp.request().method()} ${resp.url()} -> ${resp.status()})`);
    });
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) {
        pageErrors.push(m.text());
      }
    });
    await page.goto(base + '/', { waitUntil: 'load' });
    log(`opened ${base}/: "${await page.title()}"`);

    // The charts update: every chart's data-points grows by >= 2 (one point per 2 s poll).
    const charts = ['#chart-pages', '#chart-queue', '#chart-errors'];
    const points = async () => Promise.all(charts.map(async (c) =>
      Number(await page.getAttribute(c, 'data-points')) || 0));
    await page.waitForFunction(() => Number(document.querySelector('#chart-pages')
      .dataset.points) >= 1, null, { timeout: 10000 });
    const first = await points();
    await page.waitForFunction((n) => ['#chart-pages', '#chart-queue', '#chart-errors']
      .every((c, i) => Number(document.querySelector(c).dataset.points) >= n[i] + 2),
      first, { timeout: 15000 });
    const later = await points();
    log(`charts updated: data-points ${first.join('/')} -> ${later.join('/')}`);
    const state = await page.textContent('#state');
    if (!/running|paused/.test(state)) fail(`#state shows ${JSON.stringify(state)} during the crawl`);
    const stored = await page.textContent('#pages-stored');
    log(`#state ${state.trim()}, #pages-stored ${stored.trim()}`);

    // Look the host up.
    await page.fill('#host-search', HOST);
    await page.press('#host-search', 'Enter');
    await page.waitForFunction((h) => {
      const r = document.querySelector('#host-result');
      return !r.hidden && r.textContent.includes(h);
    }, HOST, { timeout: 10000 });
    const policyHost = (await page.textContent('#policy-host')).trim();
    if (policyHost !== HOST) fail(`#policy-host shows ${policyHost}, not ${HOST}`);
    const current = await page.inputValue('#policy-delay');
    log(`looked up ${HOST}: #policy-delay prefilled with ${current}`);
    if (Number(current) !== DELAY_MS) fail(`#policy-delay prefilled ${current}, not ${DELAY_MS}`);

    // A less polite delay: refused, the page shows the server's message naming the rule.
    const result = async () => page.evaluate(() => {
      const r = document.querySelector('#policy-result');
      return { hidden: r.hidden, text: r.textContent, cls: r.className };
    });
    await page.fill('#policy-delay', '10');
    await page.click('#policy-submit');
    await page.waitForFunction(() => {
      const r = document.querySelector('#policy-result');
      return !r.hidden && r.textContent !== '';
    }, null, { timeout: 10000 });
    let r = await result();
    if (!/400/.test(r.text) || !/politer/.test(r.text) || !/error/.test(r.cls)) {
      fail(`a less polite delay: #policy-result ${JSON.stringify(r)}`);
    }
    log(`less polite delay 10 ms refused: "${r.text}"`);
    let h = await api(base, `/hosts/${HOST}`);
    if (h.policy.crawl_delay_ms !== DELAY_MS) fail(`a refused policy changed it: ${JSON.stringify(h.policy)}`);

    // A politer delay: applied.
    await page.fill('#policy-delay', String(POLITER_MS));
    await page.click('#policy-submit');
    await page.waitForFunction(() => {
      const r = document.querySelector('#policy-result');
      return !r.hidden && r.textContent.startsWith('applied');
    }, null, { timeout: 10000 });
    r = await result();
    if (!r.text.includes(HOST) || !r.text.includes(String(POLITER_MS)) || !/ok/.test(r.cls)) {
      fail(`a politer delay: #policy-result ${JSON.stringify(r)}`);
    }
    log(`politer delay ${POLITER_MS} ms: "${r.text}"`);
    h = await api(base, `/hosts/${HOST}`);
    if (h.policy.crawl_delay_ms !== POLITER_MS) {
      fail(`GET /hosts/${HOST}: policy ${JSON.stringify(h.policy)}, not crawl_delay_ms ${POLITER_MS}`);
    }
    log(`GET /hosts/${HOST}: policy ${JSON.stringify(h.policy)}`);
    // The page looked the host up again and shows the new policy.
    await page.waitForFunction((v) => document.querySelector('#policy-delay').value === v,
      String(POLITER_MS), { timeout: 10000 });

    if (pageErrors.length) fail(`the page logged errors: ${pageErrors.join('; ')}`);
    fs.mkdirSync(path.dirname(path.resolve(screenshot)), { recursive: true });
    try { fs.unlinkSync(screenshot); } catch (e) { /* none yet */ }
    await page.screenshot({ path: screenshot, fullPage: true });
    const size = fs.existsSync(screenshot) ? fs.statSync(screenshot).size : 0;
    if (size === 0) fail(`no screenshot at ${screenshot}`);
    const png = fs.readFileSync(screenshot).subarray(0, 8);
    if (!png.equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
      fail(`${screenshot} is not a PNG`);
    }
    log(`screenshot ${screenshot} (${size} bytes)`);
  } finally {
    await browser.close();
  }
  const s = await api(base, '/status');
  if (s.state !== 'running') fail(`the crawl is no longer running (${s.state}): the test was too slow`);
}

main().then(() => {
  log('e2e dashboard: all checks passed');
}, (e) => {
  console.error('dashboard_test: FAIL: ' + (e && e.message ? e.message : e));
  process.exitCode = 1;
}).finally(async () => {
  // Stop the crawl, then the test web (SIGTERM; each saves its state and exits).
  for (const c of children.reverse()) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const exited = new Promise((resolve) => c.on('exit', resolve));
    c.kill('SIGTERM');
    const timeout = new Promise((resolve) => setTimeout(resolve, 20000).unref());
    await Promise.race([exited, timeout]);
  }
  if (tmp && !process.env.KEEP) fs.rmSync(tmp, { recursive: true, force: true });
  else if (tmp) log(`kept ${tmp}`);
});

// Harvest dashboard: polls the admin API and draws its own charts on <canvas>.
// Plain JavaScript, no libraries: the binary serves these files and may run offline.
// API (docs/dashboard.md): GET status every 2 s, GET hosts/{host}, POST hosts/{host}/policy,
// PUT/DELETE hosts/{host}/block, POST pause / resume. Paths are relative so the page also
// works behind a reverse proxy under a prefix.
'use strict';

(function () {
  const POLL_MS = 2000;
  const MAX_POINTS = 180;  // 6 minutes of 2 s polls
  const MIN_WINDOW = 30;   // the x axis spans at least 1 minute
  const TOKEN_KEY = 'harvest.admin.token';

  // Form field id, policy key, whole number?
  const POLICY_FIELDS = [
    ['policy-delay', 'crawl_delay_ms', true],
    ['policy-concurrent', 'max_concurrent', true],
    ['policy-weight', 'weight', false],
  ];

  const byId = (id) => document.getElementById(id);
  const history = { pages: [], queue: [], errors: [] };
  let currentHost = '';
  let pollTimer = null;

  // ---- API ----

  function token() {
    try {
      return sessionStorage.getItem(TOKEN_KEY) || '';
    } catch (e) {
      return '';
    }
  }

  // Resolves to {ok, status, json, text}; never rejects (a network error is status 0).
  async function api(method, path, body) {
    const headers = {};
    const t = token();
    if (t) headers['Authorization'] = 'Bearer ' + t;
    const init = { method: method, headers: headers, cache: 'no-store' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(path, init);
    } catch (e) {
      return { ok: false, status: 0, json: null, text: 'cannot reach the crawler: ' + e.message };
    }
    const text = await res.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch (e) {
      json = null;
    }
    return { ok: res.ok, status: res.status, json: json, text: text };
  }

  // The server's own words for a failed request.
  function errorText(r) {
    if (r.status === 0) return r.text;
    if (r.status === 401 || r.status === 403) {
      return 'HTTP ' + r.status + ': the API needs a valid token (enter it above)';
    }
    let detail = '';
    if (r.json && typeof r.json === 'object') {
      detail = r.json.error || r.json.message || JSON.stringify(r.json);
      if (typeof detail === 'object') detail = detail.message || JSON.stringify(detail);
    } else {
      detail = (r.text || '').trim();
    }
    return 'HTTP ' + r.status + (detail ? ': ' + detail : '');
  }

  function hostPath(host) {
    // Keep a port's ':' readable; everything else that is not a host character is escaped.
    return 'hosts/' + encodeURIComponent(host).replace(/%3A/gi, ':');
  }

  function show(el, text, kind) {
    el.textContent = text;
    el.className = 'message' + (kind ? ' ' + kind : '');
    el.hidden = !text;
  }

  // ---- Formatting ----

  function fmtNumber(v, digits) {
    if (typeof v !== 'number' || !isFinite(v)) return '–';
    return v.toLocaleString('en-US', { maximumFractionDigits: digits || 0 });
  }

  function fmtBytes(v) {
    if (typeof v !== 'number' || !isFinite(v)) return '–';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (v >= 1024 && i < units.length - 1) {
      v /= 1024;
      i++;
    }
    return (i === 0 ? v.toFixed(0) : v.toFixed(1)) + ' ' + units[i];
  }

  function fmtDuration(s) {
    if (typeof s !== 'number' || !isFinite(s)) return '–';
    s = Math.floor(s);
    const d = Math.floor(s / 86400);
    const h = Math.floor((s % 86400) / 3600);
    const m = Math.floor((s % 3600) / 60);
    const sec = s % 60;
    if (d > 0) return d + 'd ' + h + 'h';
    if (h > 0) return h + 'h ' + m + 'm';
    if (m > 0) return m + 'm ' + sec + 's';
    return sec + 's';
  }

  // ---- Charts ----

  // Draws `values` (numbers, oldest first) as a line with a zero-based y axis, and records
  // the number of points in data-points (browser tests watch it grow).
  function drawChart(canvas, values, unit) {
    const ratio = window.devicePixelRatio || 1;
    const cssWidth = canvas.clientWidth || canvas.width;
    const cssHeight = canvas.clientHeight || canvas.height;
    if (canvas.width !== Math.round(cssWidth * ratio)) canvas.width = Math.round(cssWidth * ratio);
    if (canvas.height !== Math.round(cssHeight * ratio)) {
      canvas.height = Math.round(cssHeight * ratio);
    }
    const ctx = canvas.getContext('2d');
    canvas.dataset.points = String(values.length);
    if (!ctx) return;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, cssWidth, cssHeight);
    const left = 48, right = 8, top = 8, bottom = 18;
    const w = cssWidth - left - right;
    const h = cssHeight - top - bottom;
    let max = 0;
    for (const v of values) max = Math.max(max, v);
    // Four round steps (1, 2 or 5 × 10^n each) up to at least the largest value.
    const tick = niceCeil(max / 4);
    max = 4 * tick;
    // The x axis spans the samples kept, at least MIN_WINDOW of them so early points are
    // not crowded against "now".
    const windowPoints = Math.min(MAX_POINTS, Math.max(MIN_WINDOW, values.length));

    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = '#6b7385';
    ctx.strokeStyle = '#d9dde5';
    ctx.lineWidth = 1;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (let i = 0; i <= 4; i++) {
      const y = top + h - (h * i) / 4;
      ctx.beginPath();
      ctx.moveTo(left, Math.round(y) + 0.5);
      ctx.lineTo(left + w, Math.round(y) + 0.5);
      ctx.stroke();
      ctx.fillText(fmtNumber(tick * i, tick < 1 ? 2 : 0) + unit, left - 4, y);
    }
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    const span = ((windowPoints - 1) * POLL_MS) / 1000;
    ctx.fillText('-' + fmtDuration(span), left, top + h + 4);
    ctx.textAlign = 'right';
    ctx.fillText('now', left + w, top + h + 4);
    if (values.length === 0) return;

    const step = w / (windowPoints - 1);
    const x0 = left + w - (values.length - 1) * step;
    const yOf = (v) => top + h - (max > 0 ? (v / max) * h : 0);
    ctx.beginPath();
    values.forEach((v, i) => {
      const x = x0 + i * step;
      if (i === 0) ctx.moveTo(x, yOf(v));
      else ctx.lineTo(x, yOf(v));
    });
    ctx.strokeStyle = '#2364d2';
    ctx.lineWidth = 2;
    ctx.stroke();
    // Area under the line.
    ctx.lineTo(x0 + (values.length - 1) * step, top + h);
    ctx.lineTo(x0, top + h);
    ctx.closePath();
    ctx.fillStyle = 'rgba(35, 100, 210, 0.12)';
    ctx.fill();
    // The latest value, top left (the newest points are on the right).
    const last = values[values.length - 1];
    ctx.fillStyle = '#1d2330';
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    ctx.fillText('now: ' + fmtNumber(last, last < 10 ? 2 : 0) + unit, left + 6, top + 2);
  }

  // The smallest of 1, 2, 5 × 10^n at or above v (0.25 for nothing to show), so the axis
  // labels are round.
  function niceCeil(v) {
    if (!(v > 0)) return 0.25;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 5, 10]) {
      if (v <= m * p) return m * p;
    }
    return 10 * p;
  }

  function redrawCharts() {
    drawChart(byId('chart-pages'), history.pages, '');
    drawChart(byId('chart-queue'), history.queue, '');
    drawChart(byId('chart-errors'), history.errors, '%');
  }

  function push(list, v) {
    list.push(typeof v === 'number' && isFinite(v) ? v : 0);
    if (list.length > MAX_POINTS) list.splice(0, list.length - MAX_POINTS);
  }

  // ---- Status ----

  function renderStatus(s) {
    const state = typeof s.state === 'string' ? s.state : 'unknown';
    const badge = byId('state');
    badge.textContent = state;
    badge.className = 'state state-' + state.replace(/[^a-z]/g, '');
    byId('pause').disabled = state !== 'running';
    byId('resume').disabled = state !== 'paused';
    byId('pages-per-sec').textContent = fmtNumber(s.pages_per_sec, 1);
    byId('queue-depth').textContent = fmtNumber(s.queue_depth);
    byId('error-rate').textContent =
        typeof s.error_rate_percent === 'number' ? fmtNumber(s.error_rate_percent, 1) + '%' : '–';
    byId('pages-stored').textContent = fmtNumber(s.pages_stored);
    byId('bytes-stored').textContent = fmtBytes(s.bytes_stored);
    byId('uptime').textContent = fmtDuration(s.uptime_s);
    const hosts = s.hosts || {};
    byId('hosts-active').textContent = fmtNumber(hosts.active);
    byId('hosts-ready').textContent = fmtNumber(hosts.ready);
    byId('hosts-waiting').textContent = fmtNumber(hosts.waiting);
    byId('hosts-blocked').textContent = fmtNumber(hosts.blocked);
    renderBusiest(s.busiest_hosts);
  }

  // The optional "busiest_hosts": [{host, pages, queued, errors}] of GET status; the panel
  // stays hidden when the server does not send it.
  function renderBusiest(list) {
    const section = byId('busiest-section');
    const body = byId('busiest-body');
    if (!Array.isArray(list)) {
      section.hidden = true;
      body.replaceChildren();
      return;
    }
    section.hidden = false;
    const rows = list.map((h) => {
      const tr = document.createElement('tr');
      const name = document.createElement('td');
      const link = document.createElement('a');
      link.textContent = String(h.host);
      link.title = 'look up ' + h.host;
      link.addEventListener('click', () => {
        byId('host-search').value = String(h.host);
        lookUpHost(String(h.host));
      });
      name.appendChild(link);
      tr.appendChild(name);
      for (const k of ['pages', 'queued', 'errors']) {
        const td = document.createElement('td');
        td.className = 'num';
        td.textContent = fmtNumber(h[k]);
        tr.appendChild(td);
      }
      return tr;
    });
    body.replaceChildren(...rows);
  }

  async function poll() {
    clearTimeout(pollTimer);
    const r = await api('GET', 'status');
    if (r.ok && r.json && typeof r.json === 'object') {
      renderStatus(r.json);
      push(history.pages, r.json.pages_per_sec);
      push(history.queue, r.json.queue_depth);
      push(history.errors, r.json.error_rate_percent);
      redrawCharts();
      show(byId('message'), '', '');
      byId('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
    } else {
      const badge = byId('state');
      badge.textContent = r.status === 0 ? 'unreachable' : 'error';
      badge.className = 'state state-error';
      show(byId('message'), 'GET status: ' + errorText(r), 'error');
    }
    pollTimer = setTimeout(poll, POLL_MS);
  }

  // ---- Hosts ----

  function setHost(host) {
    currentHost = host;
    byId('policy-host').textContent = host || '—';
    byId('policy-submit').disabled = !host;
    byId('block').disabled = !host;
    byId('unblock').disabled = !host;
  }

  async function lookUpHost(host) {
    host = host.trim().toLowerCase();
    const result = byId('host-result');
    if (!host) return;
    const r = await api('GET', hostPath(host));
    if (!r.ok) {
      result.hidden = true;
      setHost(r.status === 404 ? '' : host);
      show(byId('host-message'), 'GET ' + hostPath(host) + ': ' + errorText(r), 'error');
      return;
    }
    setHost(host);
    show(byId('host-message'), '', '');
    result.textContent = JSON.stringify(r.json, null, 2);
    result.hidden = false;
    // Pre-fill the form with the host's current policy when the answer has one.
    // Only fields the operator changes are sent (the others keep their value).
    const p = r.json && typeof r.json.policy === 'object' && r.json.policy ? r.json.policy : {};
    for (const [id, key] of POLICY_FIELDS) {
      const el = byId(id);
      const v = p[key];
      el.value = typeof v === 'number' ? String(v) : '';
      el.dataset.current = el.value;
    }
  }

  // The policy fields filled in and changed from the host's current policy; an error text
  // for a value that is not a number.
  function policyBody() {
    const body = {};
    for (const [id, key, integer] of POLICY_FIELDS) {
      const el = byId(id);
      const raw = el.value.trim();
      if (raw === '' || raw === (el.dataset.current || '')) continue;
      const v = Number(raw);
      if (!isFinite(v) || (integer && !Number.isInteger(v))) {
        return { error: key + ' must be ' + (integer ? 'a whole number' : 'a number') };
      }
      body[key] = v;
    }
    return { body: body };
  }

  async function submitPolicy() {
    const out = byId('policy-result');
    if (!currentHost) return;
    const p = policyBody();
    if (p.error) {
      show(out, p.error, 'error');
      return;
    }
    if (Object.keys(p.body).length === 0) {
      show(out, 'nothing to change: enter a new value in at least one field', 'error');
      return;
    }
    byId('policy-submit').disabled = true;
    const r = await api('POST', hostPath(currentHost) + '/policy', p.body);
    byId('policy-submit').disabled = !currentHost;
    if (r.ok) {
      show(out, 'applied to ' + currentHost + ': ' + JSON.stringify(p.body), 'ok');
      lookUpHost(currentHost);
    } else {
      show(out, errorText(r), 'error');
    }
  }

  async function setBlocked(blocked) {
    if (!currentHost) return;
    const r = await api(blocked ? 'PUT' : 'DELETE', hostPath(currentHost) + '/block');
    if (r.ok) {
      const host = currentHost;
      await lookUpHost(host);
      show(byId('host-message'), host + (blocked ? ' blocked' : ' unblocked'), 'ok');
    } else {
      show(byId('host-message'), errorText(r), 'error');
    }
  }

  async function pauseOrResume(action) {
    const r = await api('POST', action);
    if (!r.ok) show(byId('message'), 'POST ' + action + ': ' + errorText(r), 'error');
    poll();
  }

  // ---- Wiring ----

  function init() {
    byId('token').value = token();
    byId('token-form').addEventListener('submit', (e) => {
      e.preventDefault();
      try {
        const t = byId('token').value.trim();
        if (t) sessionStorage.setItem(TOKEN_KEY, t);
        else sessionStorage.removeItem(TOKEN_KEY);
      } catch (err) {
        show(byId('message'), 'cannot store the token: ' + err.message, 'error');
      }
      poll();
    });
    byId('pause').addEventListener('click', () => pauseOrResume('pause'));
    byId('resume').addEventListener('click', () => pauseOrResume('resume'));
    byId('host-search-form').addEventListener('submit', (e) => {
      e.preventDefault();
      lookUpHost(byId('host-search').value);
    });
    byId('policy-form').addEventListener('submit', (e) => {
      e.preventDefault();
      submitPolicy();
    });
    byId('block').addEventListener('click', () => setBlocked(true));
    byId('unblock').addEventListener('click', () => setBlocked(false));
    window.addEventListener('resize', redrawCharts);
    setHost('');
    redrawCharts();
    poll();
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', init);
  } else {
    init();
  }
})();

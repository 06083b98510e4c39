// The status page's live updates: load the last hour the server sampled
// (api/history), poll api/status, redraw the tables from it and chart the
// history; actions.js adds the actions on jobs. Text goes in through
// textContent and setAttribute only, never as HTML.
(() => {
  'use strict';
  document.documentElement.classList.remove('nojs');
  const body = document.body;
  const refresh = Number(body.dataset.refresh) || 1000;
  const KEEP_MS = 3600 * 1000; // the history charted: the last hour
  const COLORS = ['#3b7dd8', '#2f9e5b', '#d9453b', '#c77700', '#8e5bd8', '#17a2b8', '#d63384', '#6c757d'];
  const history = [];
  const $ = (id) => document.getElementById(id);

  // el builds an element; kids are nodes or text.
  const el = (tag, attrs, kids, ns) => {
    const e = ns ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const k of [].concat(kids ?? [])) e.append(k);
    return e;
  };
  const svg = (tag, attrs) => el(tag, attrs, null, true);
  const set = (id, text) => { const e = $(id); if (e) e.textContent = text; };

  const num = (n) => String(Math.trunc(n || 0)).replace(/\B(?=(\d{3})+(?!\d))/g, '\u2009');
  const pct = (f) => (f || 0).toFixed(1) + '%';
  const age = (s) => {
    s = Math.max(0, Math.floor(s));
    if (s < 60) return s + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm';
    if (s < 86400) return Math.floor(s / 3600) + 'h' + Math.floor(s % 3600 / 60) + 'm';
    return Math.floor(s / 86400) + 'd';
  };
  const ago = (iso, now) => {
    const t = Date.parse(iso);
    return !iso || iso.startsWith('0001') ? '' : isNaN(t) ? iso : age((now - t) / 1000) + ' ago';
  };
  // span names a chart's width, rounded to its unit: 1m, 12m, 1h.
  const span = (d) => d < 59500 ? Math.round(d / 1000) + 's' : d < 5400000 ? Math.round(d / 60000) + 'm' : Math.round(d / 3600000) + 'h';
  const ms = (n) => n < 1000 ? n + 'ms' : n < 60000 ? (n / 1000).toFixed(1) + 's' : age(n / 1000);
  const clock = (t) => new Date(t).toLocaleTimeString([], { hour12: false });

  // bar is a stacked bar of [percent, class] parts.
  const bar = (parts) => {
    const b = svg('svg', { class: 'bar', viewBox: '0 0 100 1', preserveAspectRatio: 'none', 'aria-hidden': 'true' });
    let x = 0;
    for (const [w, cls] of parts) {
      b.append(svg('rect', { class: cls, x: x.toFixed(2), width: (w || 0).toFixed(2), height: 1 }));
      x += w || 0;
    }
    return b;
  };
  const progress = (parts, text) => el('td', {}, el('div', { class: 'progress' }, [bar(parts), el('span', { class: 'ptext' }, text)]));
  const n = (v) => el('td', { class: 'n' }, num(v));
  const empty = (cols, text) => el('tr', { class: 'empty' }, el('td', { colspan: cols }, text));

  const took = (j) => !j.duration_ms ? '' : (j.state === 'finished' ? ' · took ' : ' · running for ') + ms(j.duration_ms);
  // budgetNote says which budget ended the round and how many links it
  // left out (the counters' skipped_<budget>), or which hosts it closed.
  const budgetNote = (j) => {
    const c = j.counters, parts = [];
    if (j.budget_reached) parts.push(`${j.budget_reached} budget reached`);
    const left = (c.skipped_max_pages || 0) + (c.skipped_max_pages_per_host || 0) + (c.skipped_max_bytes || 0) +
      (c.skipped_max_duration || 0);
    if (left) parts.push(`${num(left)} links past a budget`);
    if (c.hosts_closed) parts.push(`${num(c.hosts_closed)} hosts at max_pages_per_host`);
    return parts.length ? ' · ' + parts.join(' · ') : '';
  };
  const jobRow = (j, now) => {
    const p = j.progress, c = j.counters;
    const when = (j.started_at ? 'started ' + ago(j.started_at, now) : 'submitted ' + ago(j.submitted_at, now)) + took(j) +
      budgetNote(j);
    return el('tr', { 'data-job': j.job }, [
      el('td', { class: 'name' }, [el('span', { class: 'job' }, j.job), el('span', { class: 'sub' }, `round ${j.round} · ${when}`)]),
      el('td', {}, el('span', { class: 'state ' + (j.label || j.state) }, j.label || j.state)),
      progress([[p.stored_pct, 'stored'], [p.duplicates_pct, 'dup'], [p.failed_pct, 'failed']],
        [el('b', { class: 'pct' }, pct(p.percent)), ' ', el('span', { class: 'done' }, num(p.done)), ' / ',
          el('span', { class: 'total' }, num(p.total))]),
      n(c.stored), n(c.failed), n(c.duplicates), n(c.queued), n(c.in_flight), n(c.list_pages), el('td', { class: 'actions js-only' })]);
  };


  // forFetchers is what counts against a slave's capacity: what it holds
  // less what it parked (a paused or slow host's), as it published them.
  const forFetchers = (s) => s.published ? Math.max(0, s.held - s.parked) : s.in_flight;
  const heldText = (s) => {
    const t = `${num(forFetchers(s))} / ${s.capacity || '?'}`;
    return s.published && s.parked ? `${t} +${num(s.parked)} parked` : t;
  };
  const slaveRow = (s, now, leaseMS) => {
    const load = s.capacity ? Math.min(100, 100 * forFetchers(s) / s.capacity) : 0; // never over 100%
    const stale = !s.live || 3 * s.heartbeat_age_ms > 2 * leaseMS; // missed two heartbeats
    return el('tr', s.live ? { 'data-slave': s.id } : { 'data-slave': s.id, class: 'gone' }, [
      el('td', { class: 'n' }, String(s.id)),
      el('td', {}, s.live ? s.host || '' : el('span', { class: 'bad' }, 'not live: work waits to be moved')),
      el('td', { class: 'n' }, s.pid ? String(s.pid) : ''),
      progress([[load, 'load']], heldText(s)),
      el('td', { class: 'n' }, s.published ? num(s.fetching) : '?'), el('td', { class: 'n' }, s.published ? num(s.waiting) : '?'),
      n(s.queued), n(s.stored), n(s.failed),
      el('td', {}, s.started_at ? ago(s.started_at, now) : ''),
      el('td', stale ? { class: 'bad' } : {}, s.live ? ms(s.heartbeat_age_ms) + ' ago' : 'lapsed')]);
  };

  const proxyRow = (p, now) => el('tr', {}, [
    el('td', {}, p.proxy), el('td', {}, p.scheme), n(p.score), el('td', { class: 'n' }, Math.round(p.latency_ms) + ' ms'),
    el('td', { class: 'n' }, pct(100 * p.success)), n(p.in_flight), el('td', {}, p.anonymity || ''),
    el('td', {}, p.checked ? ago(p.checked, now) : '')]);

  const pool = (l, now) => {
    if (!l) return [el('span', { class: 'bad' }, 'The proxy pool could not be read.')];
    const b = l.breaker.open
      ? [el('b', { class: 'bad' }, 'open'), ` since ${ago(l.breaker.since, now)}: ${l.breaker.reason || ''}`]
      : [el('b', { class: 'good' }, 'closed')];
    const out = [el('span', {}, [el('b', {}, num(l.usable)), ' usable']), el('span', {}, [el('b', {}, num(l.tracked)), ' tracked']),
      el('span', {}, [el('b', {}, num(l.removed)), ' removed']), el('span', {}, ['breaker ', ...b])];
    if (l.validator) out.push(el('span', {}, 'validator ' + l.validator));
    if (l.last_round) out.push(el('span', {}, 'last round ' + ago(l.last_round, now)));
    return out;
  };

  const hostRow = (h) => el('tr', { 'data-host': h.host }, [
    el('td', {}, h.host), n(h.held), n(h.in_flight), n(h.holders),
    el('td', { class: 'n' + (h.rate_factor < 1 ? ' bad' : '') }, h.rate_factor < 1 ? '×' + h.rate_factor.toFixed(2) + ' (backed off)' : 'full'),
    el('td', h.paused_ms ? { class: 'bad' } : {}, h.paused_ms ? 'for ' + ms(h.paused_ms) : 'no'),
    el('td', {}, h.robots || '')]);

  // failRow is one job's failures by kind, its last reasons and its
  // warnings.
  const failRow = (j) => {
    const f = j.failures || { by_kind: {}, recent: [] };
    const kinds = Object.entries(f.by_kind).sort((a, b) => b[1] - a[1])
      .map(([k, v]) => el('span', { class: 'kind' }, [el('b', {}, num(v)), ' ' + k]));
    const recent = el('ul', { class: 'reasons' }, f.recent.map((r) =>
      el('li', {}, [el('span', { class: 'kind' }, r.kind), ' ', el('span', { class: 'url' }, r.url), ': ' + r.reason])));
    const warns = el('ul', { class: 'warnings' }, (j.warnings || []).map((w) =>
      el('li', {}, typeof w === 'string' ? w : w.message || w.text || JSON.stringify(w))));
    return el('tr', { 'data-job': j.job }, [el('td', { class: 'name' }, el('span', { class: 'job' }, j.job)),
      el('td', {}, kinds.length ? kinds : 'none'), el('td', {}, [recent, warns])]);
  };
  // sinkRows are a job's rows of the sinks table, one per sink (--sink), by
  // its scheme.
  const sinkRows = (j) => Object.keys(j.sinks || {}).sort().map((name) => {
    const s = j.sinks[name];
    return el('tr', { 'data-job': j.job, 'data-sink': name }, [
      el('td', { class: 'name' }, el('span', { class: 'job' }, j.job)), el('td', {}, name), n(s.accepted),
      el('td', { class: s.retried ? 'n bad' : 'n' }, num(s.retried)), el('td', { class: s.refused ? 'n bad' : 'n' }, num(s.refused))]);
  });
  const hasFailures = (j) => (j.failures && Object.keys(j.failures.by_kind).length) || (j.warnings && j.warnings.length);

  const rows = (id, items, row, cols, none, now, arg) => {
    const tb = document.querySelector(`#${id} tbody`);
    tb.replaceChildren(...(items.length ? items.map((x) => row(x, now, arg)) : [empty(cols, none)]));
  };

  const render = (snap) => {
    const now = Date.parse(snap.time), t = snap.totals, c = snap.cluster;
    set('prefix', c.prefix); set('max-slaves', c.max_slaves); set('lease', c.lease); set('epoch', c.epoch);
    set('time', clock(now)); $('time').setAttribute('datetime', snap.time);
    set('t-running', num(t.jobs_running)); set('t-jobs', num(c.jobs_total)); set('t-slaves', num(t.slaves_live));
    set('t-queued', num(t.queued)); set('t-inflight', num(t.in_flight)); set('t-stored', num(t.stored));
    set('t-failed', num(t.failed)); set('t-proxies', snap.proxies ? num(snap.proxies.usable) : '–');
    rows('jobs', snap.jobs, jobRow, 10, 'No jobs submitted yet.', now);
    rows('slaves', snap.slaves, slaveRow, 11, 'No live slaves.', now, c.lease_ms);
    rows('failures', snap.jobs.filter(hasFailures), failRow, 3, 'No failures or warnings in the jobs shown.', now);
    const sinks = snap.jobs.flatMap(sinkRows);
    document.querySelector('#sinks tbody').replaceChildren(...(sinks.length ? sinks : [empty(5, 'No job of those shown has sinks (--sink).')]));
    rows('hosts', snap.hosts || [], hostRow, 7, 'No host has tasks held.', now);
    rows('proxies', snap.proxies ? snap.proxies.proxies : [], proxyRow, 8,
      snap.proxies ? 'No usable proxies: requests go direct (jobs with proxy: require wait).' : 'The proxy pool could not be read.', now);
    $('pool').replaceChildren(...pool(snap.proxies, now));
    $('errors').replaceChildren(...(snap.errors || []).map((e) => el('p', {}, e)));
    document.dispatchEvent(new CustomEvent('crawler:rendered', { detail: snap })); // actions.js fills the actions
  };

  // add appends a point to the history, with the rates since the previous
  // point, and drops what is older than KEEP_MS. A repeated (cached)
  // snapshot is skipped.
  const add = (t, done, failed, queues) => {
    const prev = history[history.length - 1];
    if (prev && t <= prev.t) return;
    const p = { t, done, failed, queues, rate: 0, err: 0 };
    if (prev) {
      const dd = Math.max(0, done - prev.done), df = Math.min(dd, Math.max(0, failed - prev.failed));
      p.rate = dd / ((t - prev.t) / 1000);
      p.err = dd ? 100 * df / dd : 0;
    }
    history.push(p);
    while (history.length && history[0].t < t - KEEP_MS) history.shift();
  };

  // sample adds a snapshot: pages done over the jobs, and each slave's
  // tasks, queued plus held (leased), as the server's samples count them.
  const sample = (snap) => {
    let done = 0, failed = 0;
    for (const j of snap.jobs) { done += j.counters.stored + j.counters.failed; failed += j.counters.failed; }
    const queues = {};
    for (const s of snap.slaves) queues[s.id] = s.queued + s.in_flight;
    add(Date.parse(snap.time), done, failed, queues);
  };

  // seed loads the samples the server kept, so a fresh load shows the last
  // hour.
  const seed = async () => {
    try {
      const r = await fetch('api/history', { cache: 'no-store' });
      if (!r.ok) return;
      for (const s of (await r.json()).samples || []) add(s.t, s.done, s.failed, s.slaves || {});
    } catch (e) { /* the live samples still chart */ }
  };

  const nice = (v) => {
    if (v <= 1) return 1;
    const e = Math.pow(10, Math.floor(Math.log10(v)));
    return [1, 2, 5, 10].find((m) => m * e >= v) * e;
  };

  // chart draws series [{color, values}] over the history's time axis.
  const chart = (id, series, fmt) => {
    const box = $('chart-' + id), pts = history.slice(1);
    if (!pts.length) return;
    const t1 = pts[pts.length - 1].t, t0 = Math.min(history[0].t, t1 - 60000); // at least a minute wide
    const top = nice(Math.max(0, ...series.flatMap((s) => s.values)));
    box.replaceChildren(...series.map((s) => svg('polyline', {
      stroke: s.color || '',
      points: s.values.map((v, i) => `${(300 * (pts[i].t - t0) / (t1 - t0)).toFixed(1)},${(100 - 96 * v / top).toFixed(1)}`).join(' '),
    })));
    set(`c-${id}-max`, `max ${fmt(top)}, last ${span(t1 - t0)}`);
  };

  const draw = (snap) => {
    const pts = history.slice(1), last = pts[pts.length - 1];
    if (!last) return;
    chart('rate', [{ values: pts.map((p) => p.rate) }], (v) => v.toFixed(0) + '/s');
    chart('err', [{ values: pts.map((p) => p.err) }], (v) => v + '%');
    const ids = [...new Set(pts.flatMap((p) => Object.keys(p.queues)))].sort((a, b) => a - b);
    const qs = ids.map((id, i) => ({ id, color: COLORS[i % COLORS.length], values: pts.map((p) => p.queues[id] || 0) }));
    chart('queue', qs, num);
    $('legend-queue').replaceChildren(...qs.map((s) => {
      const sw = el('i'); sw.style.background = s.color;
      return el('li', {}, [sw, `#${s.id} ${num(s.values[s.values.length - 1])}`]);
    }));
    set('c-rate', last.rate.toFixed(1)); set('t-rate', last.rate.toFixed(1));
    set('c-err', pct(last.err)); set('c-queue', num(snap.totals.queued + snap.totals.in_flight));
  };

  const live = (ok, text) => { const l = $('live'); l.className = 'live ' + (ok ? 'ok' : 'down'); l.textContent = text; };

  const poll = async () => {
    try {
      const r = await fetch('api/status', { cache: 'no-store' });
      const j = await r.json();
      if (!r.ok) throw new Error(j.error || r.statusText);
      sample(j); render(j); draw(j);
      live(true, 'live, updated ' + clock(Date.now()));
    } catch (e) {
      live(false, 'cannot read the status: ' + e.message);
    }
    setTimeout(poll, refresh);
  };
  seed().then(poll);
})();

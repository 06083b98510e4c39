// The status page's actions on jobs, beside app.js: with a write token
// of the API, entered once and kept in this tab's sessionStorage (never a
// cookie: the token travels only as the Authorization header this script
// sets, so no other site can make a browser act), each job's row offers
// what its state allows, each confirmed before it is sent to api/v1/, and
// a form submits a job file. Text goes in through textContent only.
(() => {
  'use strict';
  const body = document.body;
  const $ = (id) => document.getElementById(id);
  const set = (id, text) => { const e = $(id); if (e) e.textContent = text; };
  let lastSnap = null;
  const TOKEN_KEY = 'crawler.apiToken';
  const token = () => sessionStorage.getItem(TOKEN_KEY) || '';
  const api = async (method, path, body) => {
    const r = await fetch('api/v1/' + path, { method, body, cache: 'no-store', credentials: 'omit',
      headers: { Authorization: 'Bearer ' + token() } });
    const j = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(`${j.error || r.statusText} (${r.status})`);
    return j;
  };
  const say = (ok, text) => { const m = $('act-msg'); m.className = 'act-msg ' + (ok ? 'ok' : 'bad'); m.textContent = text; };
  // actionsFor are the actions a job's state allows.
  const actionsFor = (j) => {
    const between = j.state === 'finished' && !!j.next_round_at && !j.cancelled_at;
    const live = !j.cancelling && (['pending', 'running', 'paused'].includes(j.state) || between);
    const acts = [];
    if (live && j.state !== 'paused') acts.push('pause');
    if (live && j.state === 'paused') acts.push('resume');
    if (live) acts.push('cancel');
    if (j.counters.failed > 0) acts.push('retry-failed');
    return acts;
  };
  // fill puts each job's actions in its row's last cell, after the page
  // drew the snapshot's rows.
  const fill = (snap) => {
    lastSnap = snap;
    for (const j of snap.jobs) {
      const cell = document.querySelector(`#jobs tr[data-job="${CSS.escape(j.job)}"] td.actions`);
      if (cell) cell.replaceChildren(...(!token() ? [] : actionsFor(j).map((a) => button(a, j.job))));
    }
  };
  const button = (action, job) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'act';
    b.dataset.action = action;
    b.dataset.job = job;
    b.textContent = action;
    return b;
  };
  const told = {
    pause: (r) => `job ${r.name} paused (it was ${r.state})`,
    resume: (r) => `job ${r.name} resumed (${r.state})`,
    cancel: (r) => r.finished ? `job ${r.name} cancelled` : `cancel of job ${r.name} requested: its master finishes it once the pages in flight are done`,
    'retry-failed': (r) => `${r.retried} failed pages of job ${r.name} re-enqueued`,
  };
  const act = async (action, job) => {
    try {
      say(true, told[action](await api('POST', `jobs/${encodeURIComponent(job)}/${action}`)));
    } catch (e) {
      say(false, `${action} ${job}: ${e.message}`);
    }
  };
  // ask shows the confirmation of action on job; only its yes sends it.
  let asked = null;
  const ask = (action, job) => {
    asked = { action, job };
    set('confirm-text', `${action} job ${job}?`);
    set('confirm-yes', `Yes, ${action}`);
    $('confirm').hidden = false;
  };
  const answer = (yes) => {
    const a = asked;
    asked = null;
    $('confirm').hidden = true;
    if (yes && a) act(a.action, a.job);
  };
  const tokenChanged = () => {
    body.classList.toggle('has-token', !!token());
    if (lastSnap) fill(lastSnap);
  };
  const operate = () => {
    $('token-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const v = $('token').value.trim();
      $('token').value = '';
      if (!v) return say(false, 'enter a write token');
      sessionStorage.setItem(TOKEN_KEY, v);
      say(true, 'token kept in this tab; the jobs show their actions');
      tokenChanged();
    });
    $('token-forget').addEventListener('click', () => { sessionStorage.removeItem(TOKEN_KEY); answer(false); say(true, 'token forgotten'); tokenChanged(); });
    $('confirm-yes').addEventListener('click', () => answer(true));
    $('confirm-no').addEventListener('click', () => answer(false));
    $('jobs').addEventListener('click', (e) => {
      const b = e.target.closest('button.act');
      if (b) ask(b.dataset.action, b.dataset.job);
    });
    $('submit-form').addEventListener('submit', async (e) => {
      e.preventDefault();
      const path = 'jobs' + ($('job-force').checked ? '?force=true' : '');
      try {
        say(true, `job ${(await api('POST', path, $('job-file').value)).name} submitted`);
        $('job-file').value = '';
      } catch (err) {
        say(false, 'submit: ' + err.message);
      }
    });
    tokenChanged();
  };
  document.addEventListener('crawler:rendered', (e) => fill(e.detail));
  operate();
})();

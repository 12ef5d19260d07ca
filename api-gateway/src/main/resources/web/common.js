// ensemble-sessions web page: helpers shared by the list and a session's page. No build step, no library.
// Every text that comes from a session (prompts, reports, folders: untrusted) is written with textContent, never as HTML.
'use strict';

const Ensemble = (() => {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;

  /** A JSON request to the gateway with the browser's sign-in cookie; state-changing ones carry the CSRF token. */
  async function api(path, options = {}) {
    const method = options.method || 'GET';
    const headers = Object.assign({ 'Accept': 'application/json' }, options.headers || {});
    if (method !== 'GET' && method !== 'HEAD') headers['X-CSRF-Token'] = csrf;
    const response = await fetch(path, { method, headers, body: options.body, credentials: 'same-origin' });
    let body = null;
    try { body = await response.json(); } catch (e) { body = null; }
    if (response.status === 401) location.reload(); // signed out (e.g. the system restarted): the sign-in page
    return { status: response.status, ok: response.ok, body };
  }

  /** An element with properties (className, title, href, ...) and children (nodes, or text put in as text). */
  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    if (props) for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null) continue;
      if (k === 'dataset') Object.assign(e.dataset, v);
      else e[k] = v;
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  const pad = n => String(n).padStart(2, '0');
  /** An instant (ISO-8601) as YYYY-MM-DD HH:MM in the browser's time zone; '' for none. */
  function time(iso) {
    if (!iso) return '';
    const d = new Date(iso);
    if (isNaN(d)) return String(iso);
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
  }

  /** Milliseconds as 42s, 3m 05s, 2h 05m; '' for none. */
  function duration(ms) {
    if (ms === null || ms === undefined) return '';
    const s = Math.round(ms / 1000);
    if (s < 60) return `${s}s`;
    if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
    return `${Math.floor(s / 3600)}h ${pad(Math.floor(s % 3600 / 60))}m`;
  }

  const number = n => (n === null || n === undefined) ? '' : Number(n).toLocaleString('en-US');

  /** How full the context window is: a bar and a percentage, or "unknown" when the agent never reported usage. */
  function fillBar(fill) {
    if (fill === null || fill === undefined) return el('span', { className: 'fill unknown', title: 'the agent never reported its context usage' }, 'unknown');
    const pct = Math.round(fill * 100);
    const level = fill >= 0.9 ? ' full' : fill >= 0.7 ? ' high' : '';
    const bar = el('span', { className: 'bar' }, el('span'));
    bar.firstChild.style.width = Math.min(100, Math.max(0, pct)) + '%';
    return el('span', { className: 'fill' + level, title: `context window ${pct}% full` }, bar, `${pct}%`);
  }

  function status(s) {
    const name = s.status || 'unknown';
    const extra = s.deleted ? ', deleted' : s.deleting ? ', deleting' : '';
    return el('span', { className: 'status ' + name }, name + extra);
  }

  function sessionLink(id, text) {
    return el('a', { href: '/session?id=' + encodeURIComponent(id) }, text || id);
  }

  function message(text, isError) {
    const m = document.getElementById('message');
    if (!text) { m.hidden = true; return; }
    m.textContent = text;
    m.className = 'message' + (isError ? ' error' : '');
    m.hidden = false;
  }

  /**
   * Live updates: the account's events from now on (GET /api/events/stream?after=end, server-sent events; the
   * browser reconnects by itself with the last event's id). Calls onChange 0.4, 2, 5 and 10 s after the last of a
   * burst of events (a session's view follows its events within a moment, longer on a busy machine).
   */
  function live(onChange) {
    const badge = document.getElementById('live');
    let timers = [];
    const changed = () => {
      timers.forEach(clearTimeout);
      timers = [400, 2000, 5000, 10000].map(ms => setTimeout(onChange, ms));
    };
    const source = new EventSource('/api/events/stream?after=end');
    source.onopen = () => { badge.textContent = 'live'; badge.className = 'live on'; };
    source.onerror = () => { badge.textContent = 'reconnecting'; badge.className = 'live off'; };
    const types = ['RunClaimed', 'RunStatusChanged', 'EngineEvent', 'TaskChanged', 'SessionChoiceRecorded', 'SessionChoiceOutcome',
      'SessionDeletionRequested', 'SessionDeletionAccepted', 'SessionDeletionSkipped', 'SessionDeletedOnComputer', 'SessionDeleted',
      'ComputerStatus'];
    for (const t of types) source.addEventListener(t, changed);
    source.onmessage = changed;
    return source;
  }

  // signing out is a POST with the CSRF token
  document.addEventListener('DOMContentLoaded', () => {
    const form = document.getElementById('logout');
    if (form) form.addEventListener('submit', async e => {
      e.preventDefault();
      await fetch('/logout', { method: 'POST', headers: { 'X-CSRF-Token': csrf }, credentials: 'same-origin' });
      location.href = '/';
    });
  });

  return { api, el, time, duration, number, fillBar, status, sessionLink, message, live };
})();

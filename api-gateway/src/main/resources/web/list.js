// The session list: GET /api/agent/sessions with the page's filters, newest first; "Show more" follows the list's
// cursor ("next") while the API gives one; with a search, each row has the passage that matched, its matches marked.
'use strict';

(() => {
  const { api, el, time, fillBar, status, sessionLink, message, live } = Ensemble;
  /** A snippet's text as nodes: each match between [[ and ]] (the API's marks) in a <mark>, the rest as text. */
  function marked(snippet) {
    const nodes = [];
    let at = 0;
    for (const m of snippet.matchAll(/\[\[(.*?)\]\]/g)) {
      nodes.push(snippet.slice(at, m.index));
      nodes.push(el('mark', null, m[1]));
      at = m.index + m[0].length;
    }
    nodes.push(snippet.slice(at));
    return nodes;
  }
  const PAGE = 50;
  const params = new URLSearchParams(location.search);
  const filters = {};
  for (const name of ['q', 'agent', 'computer', 'status', 'deleted']) {
    filters[name] = (params.get(name) || '').trim();
    const input = document.getElementById(name);
    if (input) input.value = filters[name];
  }
  const body = document.querySelector('#sessions tbody');
  const more = document.getElementById('more');
  const count = document.getElementById('count');
  let next = null;     // the cursor of the next page, when the API gave one
  let shown = [];      // the sessions shown, in order
  let known = null;    // the ids shown before a live refresh (the new ones are marked)

  function query(cursor, limit) {
    const p = new URLSearchParams();
    p.set('limit', String(limit));
    if (filters.q) p.set('q', filters.q);
    if (filters.agent) p.set('agent', filters.agent);
    if (filters.computer) p.set('computer', filters.computer);
    if (filters.status) p.set('status', filters.status);
    if (filters.deleted) p.set('deleted', filters.deleted);
    if (cursor) p.set('cursor', cursor);
    return '/api/agent/sessions?' + p.toString();
  }

  const task = t => (t && t.title) || '';

  function row(s) {
    const tr = el('tr', { className: (s.deleted ? 'deleted' : '') + (known && !known.has(s.id) ? ' fresh' : ''), dataset: { id: s.id } },
      el('td', { className: 'nowrap', title: s.id }, sessionLink(s.id, shortId(s.id))),
      el('td', null, s.agent),
      el('td', null, s.model || ''),
      el('td', null, s.computer || ''),
      el('td', { className: 'folder', title: (s.folders || []).join('\n') }, s.folder || ''),
      el('td', { className: 'prompt first' }, task(s.firstTask)),
      el('td', { className: 'prompt latest' }, task(s.latestTask)),
      el('td', null, status(s)),
      el('td', null, fillBar(s.fill)),
      el('td', null, s.resumable ? 'yes' : 'no'),
      el('td', { className: 'num' }, s.runs),
      el('td', { className: 'nowrap', title: s.lastActiveAt }, time(s.lastActiveAt)));
    const rows = [tr];
    if (s.snippet) rows.push(el('tr', { className: 'snippet' }, el('td', { colSpan: 12 }, marked(s.snippet))));
    return rows;
  }

  /** The id as the CLI's table shortens it: an agent:<agent session id> longer than 24 keeps 8 characters of the latter. */
  function shortId(id) {
    const colon = id.indexOf(':');
    return id.length > 24 && colon > 0 && colon + 9 < id.length ? id.substring(0, colon + 9) : id;
  }

  function render() {
    body.replaceChildren(...shown.flatMap(row));
    const n = shown.length;
    let text = n === 0 ? 'No sessions' + (filters.q || filters.agent || filters.computer || filters.status || filters.deleted ? ' match.' : ' yet.')
      : n === 1 ? '1 session' : `${n} sessions`;
    if (next) text += '; more below';
    count.textContent = text;
    more.hidden = !next;
  }

  async function load(cursor, limit) {
    const r = await api(query(cursor, limit));
    if (!r.ok) {
      message(r.body && r.body.message ? r.body.message : `the list could not be read (HTTP ${r.status})`, true);
      if (r.status === 503) setTimeout(refresh, 3000);
      return null;
    }
    message(null);
    next = r.body.next || null; // the API applies every filter and gives a next page while there is one
    return r.body.sessions || [];
  }

  async function refresh() {
    known = shown.length ? new Set(shown.map(s => s.id)) : null;
    const page = await load(null, Math.max(PAGE, Math.min(500, shown.length)));
    if (page) { shown = page; render(); }
  }

  more.addEventListener('click', async () => {
    known = new Set(shown.map(s => s.id));
    const page = await load(next, PAGE);
    if (page) {
      const have = new Set(shown.map(s => s.id));
      shown = shown.concat(page.filter(s => !have.has(s.id)));
      render();
    }
  });

  refresh().then(() => { known = null; live(refresh); });
})();


// One session's page: GET /api/agent/sessions/{id} (facts, runs, resume command), its events
// (GET /api/agent/sessions/{id}/events: fill over time from the agent's engine events, the choice records that started
// or continued it), its deletion audit (GET /api/audit/deletions?sessionId=), and the delete button
// (DELETE /api/agent/sessions/{id}, after a confirmation). Live: the page is read again when events come.
'use strict';

(() => {
  const { api, el, time, duration, number, fillBar, status, sessionLink, message, live } = Ensemble;
  const id = new URLSearchParams(location.search).get('id') || '';
  const enc = encodeURIComponent(id);
  let session = null;

  const AGENTS = { 'claude-code': 'Claude Code', 'codex': 'Codex', 'copilot': 'Copilot CLI', 'cursor': 'Cursor agent',
    'gemini-cli': 'Gemini CLI', 'opencode': 'OpenCode', 'qwen-code': 'Qwen Code', 'grok-build': 'Grok Build',
    'mistral-vibe': 'Mistral Vibe', 'kimi-code': 'Kimi Code', 'antigravity': 'Antigravity' };

  function fact(dl, name, ...value) {
    dl.append(el('dt', null, name), el('dd', null, ...value));
  }

  function renderFacts(s) {
    document.getElementById('title').textContent = 'Session ' + s.id;
    document.title = s.id + ' · ensemble-sessions';
    const dl = document.getElementById('facts');
    dl.replaceChildren();
    fact(dl, 'Agent', AGENTS[s.agent] ? `${AGENTS[s.agent]} (${s.agent})` : s.agent);
    if (s.agentSessionId) fact(dl, 'Agent session', s.agentSessionId);
    fact(dl, 'Model', s.model || 'unknown');
    fact(dl, 'Computer', (s.computers && s.computers.length ? s.computers : [s.computer]).join(', '));
    fact(dl, 'Folder', s.folder || 'unknown');
    if (s.folders && s.folders.length > 1) fact(dl, 'Folders', s.folders.join(', '));
    if (s.project) fact(dl, 'Project', s.project);
    fact(dl, 'Kind', s.kind || '');
    fact(dl, 'Status', status(s));
    fact(dl, 'Resumable', s.resumable ? 'yes' : 'no');
    const used = s.contextUsed != null && s.contextSize ? ` (${number(s.contextUsed)} of ${number(s.contextSize)} tokens)` : '';
    fact(dl, 'Fill', fillBar(s.fill), used);
    fact(dl, 'Runs', String(s.runs));
    fact(dl, 'Created', time(s.createdAt));
    fact(dl, 'Last active', time(s.lastActiveAt));
    if (s.latestReportSummary) fact(dl, 'Latest report', s.latestReportSummary);
    if (s.continuesSessionId) fact(dl, 'Carries on from', sessionLink(s.continuesSessionId));
    if (s.omitted) fact(dl, 'Left out', Object.entries(s.omitted).map(([k, v]) => `${v} ${k}`).join(', ') + ' (the view keeps the newest)');
  }

  function renderResume(s) {
    const div = document.getElementById('resume');
    const r = s.resume;
    if (!r) {
      div.replaceChildren(el('p', { className: 'muted' }, 'Not resumable in its agent: its agent session id is not known.'));
      return;
    }
    if (!r.command) {
      div.replaceChildren(el('p', { className: 'muted' }, `No resume command is known for agent ${s.agent}: resume session ${r.agentSessionId}`
        + (r.folder ? ` in ${r.folder}` : '') + ' with it.'));
      return;
    }
    const pre = el('pre', { className: 'command', id: 'resume-command' }, r.command);
    const copy = el('button', { type: 'button' }, 'Copy');
    copy.addEventListener('click', async () => {
      try { await navigator.clipboard.writeText(r.command); copy.textContent = 'Copied'; } catch (e) { copy.textContent = 'Select and copy it'; }
    });
    const parts = [pre, copy];
    if (!s.resumable) parts.push(el('p', { className: 'muted' }, s.status === 'gone'
      ? 'Not resumable: its agent\'s transcript is gone from the computer. This is the command it would take.'
      : 'Not resumable now (' + (s.deleted ? 'deleted' : s.status) + '). This is the command it would take.'));
    div.replaceChildren(...parts);
  }

  function renderRuns(s) {
    const body = document.querySelector('#runs tbody');
    body.replaceChildren(...(s.runList || []).map((r, i) => el('tr', { dataset: { run: r.id } },
      el('td', { className: 'num' }, i + 1),
      el('td', { className: 'prompt' }, r.title || r.taskId || r.id),
      el('td', null, r.computer || ''),
      el('td', null, el('span', { className: 'status ' + r.status }, r.status)),
      el('td', { title: r.startedAt || r.claimedAt }, time(r.startedAt || r.claimedAt)),
      el('td', { className: 'num' }, duration(r.durationMs)),
      el('td', { className: 'num' }, number(r.tokens)),
      el('td', null, (r.filesChanged && r.filesChanged.length)
        ? el('ul', { className: 'files' }, r.filesChanged.map(f => el('li', null, f))) : ''))));
  }

  /** Every event of the session the gateway keeps (its window: the newest 1 MiB), oldest first. */
  async function events() {
    const all = [];
    let after = '0';
    for (let i = 0; i < 20; i++) {
      const r = await api(`/api/agent/sessions/${enc}/events?after=${after}&limit=1000`);
      if (!r.ok) return { all, error: r.body && r.body.message ? r.body.message : `HTTP ${r.status}` };
      all.push(...r.body.events.map(e => e.event));
      if (r.body.events.length < 1000) return { all, truncated: r.body.truncated };
      after = r.body.next;
    }
    return { all };
  }

  const SVG = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  }

  /** Fill over time: each engine event that reported the context (used / size), as a line from 0 to 100 %. */
  function renderFill(list, error) {
    const div = document.getElementById('fill');
    const points = list.filter(e => e.type === 'EngineEvent' && e.payload && e.payload.contextUsed != null && e.payload.contextSize > 0)
      .map(e => ({ t: new Date(e.occurredAt).getTime(), f: e.payload.contextUsed / e.payload.contextSize }));
    if (points.length === 0) {
      div.replaceChildren(el('p', { className: 'muted', id: 'fill-none' }, error ? 'Its events could not be read: ' + error
        : 'Unknown: the agent reported no context usage for this session.'));
      return;
    }
    const W = 640, H = 160, L = 36, R = 10, T = 10, B = 24;
    const t0 = points[0].t, t1 = points[points.length - 1].t;
    const x = i => L + (points.length === 1 ? (W - L - R) / 2 : (W - L - R) * i / (points.length - 1));
    const y = f => T + (H - T - B) * (1 - Math.min(1, Math.max(0, f)));
    const chart = svg('svg', { class: 'chart', id: 'fill-chart', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img',
      'aria-label': `context window fill over ${points.length} reports` });
    for (const f of [0, 0.5, 1]) {
      chart.append(svg('line', { class: 'grid', x1: L, x2: W - R, y1: y(f), y2: y(f) }));
      chart.append(svg('text', { x: 2, y: y(f) + 3 }, `${f * 100}%`));
    }
    chart.append(svg('polyline', { class: 'line', points: points.map((p, i) => `${x(i).toFixed(1)},${y(p.f).toFixed(1)}`).join(' ') }));
    for (let i = 0; i < points.length; i++) {
      const c = svg('circle', { cx: x(i).toFixed(1), cy: y(points[i].f).toFixed(1), r: 2.5, fill: '#1f5fbf' });
      c.append(svg('title', {}, `${time(new Date(points[i].t).toISOString())}: ${Math.round(points[i].f * 100)}%`));
      chart.append(c);
    }
    chart.append(svg('text', { x: L, y: H - 6 }, time(new Date(t0).toISOString())));
    chart.append(svg('text', { x: W - R, y: H - 6, 'text-anchor': 'end' }, time(new Date(t1).toISOString())));
    const last = points[points.length - 1].f;
    div.replaceChildren(chart, el('p', { className: 'muted' },
      `${points.length} reports of the agent; peak ${Math.round(Math.max(...points.map(p => p.f)) * 100)}%, now ${Math.round(last * 100)}%.`));
  }

  function signals(sig) {
    if (!sig) return '';
    const out = [];
    if (sig.link) out.push('linked task' + (sig.linkedTitle ? ` “${sig.linkedTitle}”` : ''));
    if (sig.deliverable) out.push('same deliverable');
    if (sig.meeting) out.push('same meeting');
    if (sig.parentPage) out.push('same parent page');
    if (sig.anchors) out.push(`${sig.anchors} shared anchors` + (sig.anchorsShared && sig.anchorsShared.length ? ` (${sig.anchorsShared.join(', ')})` : ''));
    if (sig.topic) out.push(`topic ${Number(sig.topic).toFixed(2)}` + (sig.topicTerms && sig.topicTerms.length ? ` (${sig.topicTerms.join(', ')})` : ''));
    if (sig.followUp) out.push('follow-up');
    if (sig.newWork) out.push('new work');
    if (sig.warm) out.push('warm');
    if (sig.fill != null) out.push(`fill ${Math.round(sig.fill * 100)}%`);
    if (sig.tasks) out.push(`${sig.tasks} tasks`);
    return out.join('; ');
  }

  /** The choice records that started or continued the session (SessionChoiceRecorded among its events). */
  function renderChoice(list, error) {
    const div = document.getElementById('choice');
    const records = list.filter(e => e.type === 'SessionChoiceRecorded');
    if (records.length === 0) {
      div.replaceChildren(el('p', { className: 'muted', id: 'choice-none' }, error ? 'Its events could not be read: ' + error
        : 'No session-choice decision is recorded for this session: it was started by its agent (an imported transcript, or a run claimed without asking), not chosen by the system.'));
      return;
    }
    div.replaceChildren(...records.map(e => {
      const c = e.payload;
      const head = `${c.decision}  band ${c.band}` + (c.score != null ? `, score ${Number(c.score).toFixed(2)}` : '') + (c.note ? `, note ${c.note}` : '');
      const parts = [el('div', { className: 'head' }, head),
        el('p', null, c.reason),
        el('p', { className: 'muted' }, `${time(e.occurredAt)} · run ${c.runId}` + (c.taskId ? ` · task ${c.taskId}` : '')
          + ` · agent ${c.agent} on ${c.computerId} · config ${c.configVersion}`)];
      if (c.briefFromSessionId) parts.push(el('p', null, 'The new session gets the last report of ', sessionLink(c.briefFromSessionId)));
      if (c.candidates && c.candidates.length) {
        parts.push(el('table', { className: 'candidates' },
          el('thead', null, el('tr', null, ['Candidate', 'Score', 'Parts', 'Signals', 'Last active'].map(h => el('th', null, h)))),
          el('tbody', null, c.candidates.map(k => el('tr', null,
            el('td', null, sessionLink(k.sessionId), k.sessionId === id ? ' (this session)' : '', k.tooFull ? ' (too full)' : ''),
            el('td', { className: 'num' }, Number(k.score).toFixed(2)),
            el('td', null, Object.entries(k.parts || {}).map(([n, v]) => `${n} ${Number(v).toFixed(2)}`).join(', ')),
            el('td', null, signals(k.signals)),
            el('td', null, time(k.lastActiveAt)))))));
      } else {
        parts.push(el('p', { className: 'muted' }, 'No candidate sessions were weighed.'));
      }
      return el('div', { className: 'decision' }, parts);
    }));
  }

  async function renderAudit() {
    const div = document.getElementById('audit');
    const r = await api('/api/audit/deletions?sessionId=' + enc);
    if (!r.ok) { div.replaceChildren(el('p', { className: 'message error' }, r.body && r.body.message || `HTTP ${r.status}`)); return; }
    const list = r.body.deletions || [];
    if (list.length === 0) { div.replaceChildren(el('p', { className: 'muted', id: 'audit-none' }, 'No deletion was asked for.')); return; }
    div.replaceChildren(...list.map(a => {
      const g = a.guard || {};
      const parts = [
        el('div', { className: 'head' }, `${a.status}: asked ${time(a.requestedAt)} by ${a.requestedBy}` + (a.requesterId ? ` ${a.requesterId}` : '')
          + (a.confirmedBy ? `, confirmed by ${a.confirmedBy}` : '') + `, reason ${a.reason}`),
        el('p', null, `The guard ${a.decision === 'ACCEPTED' ? 'accepted it' : 'skipped it'}` + (a.skipReason ? ` (${a.skipReason})` : '')
          + (a.detail ? `: ${a.detail}` : '') + `; it saw ${(g.sessionRunIds || []).length} runs`
          + ((g.goingRunIds || []).length ? `, ${(g.goingRunIds || []).length} going` : '')
          + ((g.queuedRunIds || []).length ? `, ${(g.queuedRunIds || []).length} queued` : '') + '.')];
      if ((g.computers || []).length) parts.push(el('p', null, 'Computers: ' + g.computers.map(c =>
        `${c.computerId} (${!c.known ? 'not known' : c.online ? 'online' : 'offline'}, sessionDelete ${c.sessionDelete})`).join('; ')));
      if ((a.computersAsked || []).length) parts.push(el('p', null, 'Asked: ' + a.computersAsked.join(', ')));
      if ((a.answers || []).length) parts.push(el('ul', null, a.answers.map(x => el('li', null,
        `${x.computerId}: ${x.ok ? 'deleted' : 'failed'}` + (x.error ? ` (${x.error})` : '') + ` at ${time(x.at)}`
        + ((x.removedPaths || []).length ? `; removed ${x.removedPaths.join(', ')}` : '')))));
      if (a.deletedAt) parts.push(el('p', null, 'Deleted ' + time(a.deletedAt)));
      return el('div', { className: 'audit' }, parts);
    }));
  }

  // delete: a confirmation first; a 409 names the computer to connect (or update)
  const dialog = document.getElementById('confirm');
  const result = document.getElementById('delete-result');
  document.getElementById('delete').addEventListener('click', () => {
    const computers = session ? (session.computers && session.computers.length ? session.computers : [session.computer]) : [];
    document.getElementById('confirm-text').textContent = `Delete session ${id} from its agent on ${computers.join(', ')}? `
      + 'The agent\'s own transcript is removed there and the session can no longer be resumed; its runs and this audit stay.';
    dialog.showModal();
  });
  dialog.addEventListener('close', async () => {
    if (dialog.returnValue !== 'delete') return;
    const r = await api(`/api/agent/sessions/${enc}`, { method: 'DELETE', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    result.hidden = false;
    if (r.status === 202) {
      result.className = 'message';
      result.textContent = 'Deletion requested (' + r.body.requestId + '); the audit below follows what each computer answers.';
    } else {
      result.className = 'message error';
      const b = r.body || {};
      result.textContent = (r.status === 409 && b.computer ? `Connect computer ${b.computer}` + (b.action === 'update' ? ' (update it)' : '')
        + ', then delete again: ' : '') + (b.message || `HTTP ${r.status}`);
    }
    setTimeout(refresh, 800);
  });

  async function refresh() {
    const r = await api('/api/agent/sessions/' + enc);
    if (!r.ok) {
      message(r.status === 404 ? `No session ${id} in your account.` : (r.body && r.body.message) || `HTTP ${r.status}`, true);
      return;
    }
    message(null);
    session = r.body;
    renderFacts(session);
    renderResume(session);
    renderRuns(session);
    document.getElementById('delete').disabled = !!session.deleted;
    const ev = await events();
    renderFill(ev.all, ev.error);
    renderChoice(ev.all, ev.error);
    await renderAudit();
  }

  refresh().then(() => live(refresh));
})();

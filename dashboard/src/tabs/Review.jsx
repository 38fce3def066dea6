// Review: what kenning learned by itself, grouped by the session it came from, with accept /
// edit / reject (reject keeps the memory: a query still finds it, it is never shown unasked),
// and per extraction rule how the user judged it (a noisy rule shows itself).
import { useState } from 'preact/hooks';
import { api, useApi, qs } from '../api.js';
import { Card, Pending, Empty, Badge, fmtTime, fmtNum, short } from '../ui.jsx';

const STATUSES = ['pending', 'accepted', 'rejected', 'learned'];

function evidenceLine(m) {
  const e = m.evidence || {};
  return [m.rule, e.speaker ? `said by ${e.speaker}` : null, e.accepted ? 'accepted by the user' : null,
    e.repetition > 1 ? `repeated ×${e.repetition}` : null].filter(Boolean).join(' · ');
}

function ReviewItem({ m, onDone }) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(m.content);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const act = async (action, body) => {
    setBusy(true);
    const res = await api(`/api/review/${encodeURIComponent(m.id)}/${action}`, { method: 'POST', body: body || {} });
    setBusy(false);
    if (!res.ok) { setError(res.error); return; }
    setError(null);
    setEditing(false);
    onDone();
  };
  const state = m.review?.status || (m.needs_review ? 'needs review' : 'kept');
  return (
    <li class="review-item" data-testid="review-item" data-id={m.id}>
      <div class="review-head">
        <span class="tag">{m.type}</span>
        <span class="small">confidence {fmtNum(m.confidence)}</span>
        <Badge status={state === 'rejected' ? 'unhealthy' : (state === 'needs review' ? 'degraded' : 'healthy')} label={state} />
        <a class="small" href={`#/memories/${m.id}`}><code>{m.id}</code></a>
      </div>
      {editing ? (
        <div class="review-edit">
          <textarea aria-label="Corrected text" rows={3} value={text} onInput={(e) => setText(e.target.value)} />
          <button disabled={busy} onClick={() => act('edit', { content: text })}>Save and accept</button>
          <button class="ghost" onClick={() => { setEditing(false); setText(m.content); }}>Cancel</button>
        </div>
      ) : <p class="review-text" data-testid="review-text">{m.content}</p>}
      <p class="small muted" data-testid="review-evidence">{evidenceLine(m) || 'no evidence recorded'}</p>
      {!editing && (
        <div class="review-actions">
          <button disabled={busy} onClick={() => act('accept')} aria-label={`Accept ${m.id}`}>Accept</button>
          <button disabled={busy} class="ghost" onClick={() => setEditing(true)} aria-label={`Edit ${m.id}`}>Edit</button>
          <button disabled={busy} class="ghost" onClick={() => act('reject')} aria-label={`Reject ${m.id}`}>Reject</button>
        </div>
      )}
      {error && <p class="error-text" role="alert">{error}</p>}
    </li>
  );
}

function RulesCard({ rules }) {
  const rows = rules.data?.rules || [];
  return (
    <Card title="Extraction rules — how review judged them" testid="review-rules">
      <Pending res={rules} what="rules (/api/review/rules)" />
      {rules.ok && !rows.length && <Empty>Nothing learned yet.</Empty>}
      {rows.length > 0 && (
        <div class="table-wrap">
          <table class="table">
            <thead><tr><th>rule</th><th>learned</th><th>pending</th><th>accepted</th><th>rejected</th><th>rejected share</th></tr></thead>
            <tbody>{rows.map((r) => (
              <tr><td><code>{r.rule}</code></td><td>{r.learned}</td><td>{r.pending}</td><td>{r.accepted}</td>
                <td>{r.rejected}</td><td>{r.rejected_share == null ? '—' : `${Math.round(r.rejected_share * 100)} %`}</td></tr>
            ))}</tbody>
          </table>
        </div>
      )}
    </Card>
  );
}

export function ReviewTab() {
  const [status, setStatus] = useState('pending');
  const [project, setProject] = useState('');
  const list = useApi(`/api/review${qs({ status, project, limit: 200 })}`);
  const rules = useApi('/api/review/rules');
  const reload = () => { list.reload(); rules.reload(); };
  const groups = list.data?.sessions || [];
  return (
    <div class="pane" data-testid="review">
      <div class="toolbar">
        <label>Show <select aria-label="Review status" value={status} onChange={(e) => setStatus(e.target.value)}>
          {STATUSES.map((s) => <option value={s}>{s}</option>)}
        </select></label>
        <label>Project <input value={project} onChange={(e) => setProject(e.target.value)} placeholder="any" /></label>
        <span class="muted small" data-testid="review-total">{list.data?.total ?? 0} {status}</span>
      </div>
      <Pending res={list} what="review (/api/review)" />
      {list.ok && !groups.length && (
        <Empty>{status === 'pending' ? 'Nothing waits for review: what kenning learned below the confidence gate shows up here.'
          : `Nothing ${status}.`}</Empty>
      )}
      {groups.map((g) => (
        <Card title={g.session_key ? `Session of ${g.started_at ? fmtTime(g.started_at) : g.session_key}` : 'Not from a session'}
          testid="review-group">
          {g.task && <p class="review-task" data-testid="review-task">{short(g.task, 300)}</p>}
          <p class="small muted">
            {[g.started_at ? fmtTime(g.started_at) : null, g.harness, g.project].filter(Boolean).join(' · ')}
            {g.session_key && <> · <a href={`#/sessions/${encodeURIComponent(g.session_key)}`}><code>{g.session_key}</code></a></>}
          </p>
          <ul class="review-list">
            {g.memories.map((m) => <ReviewItem key={m.id} m={m} onDone={reload} />)}
          </ul>
        </Card>
      ))}
      <RulesCard rules={rules} />
    </div>
  );
}

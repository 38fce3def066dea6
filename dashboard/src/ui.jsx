// Shared presentational pieces: cards, status badges, tables, notices, formatting.
export const STATUS_COLOR = {
  healthy: 'var(--ok)', degraded: 'var(--warn)', unhealthy: 'var(--bad)',
  cold_start: 'var(--info)', disabled: 'var(--muted)',
};

export function fmtTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function fmtNum(v, digits = 2) {
  if (v === null || v === undefined || v === '') return '—';
  if (typeof v !== 'number') return String(v);
  return Number.isInteger(v) ? String(v) : v.toFixed(digits);
}

export function pct(v) {
  return v === null || v === undefined ? '—' : `${Math.round(v * 100)}%`;
}

export function short(text, n = 120) {
  if (!text) return '';
  const s = String(text);
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

export function Card({ title, children, class: cls = '', actions, testid }) {
  return (
    <section class={`card ${cls}`} data-testid={testid}>
      {(title || actions) && (
        <header class="card-head"><h3>{title}</h3>{actions && <div class="card-actions">{actions}</div>}</header>
      )}
      <div class="card-body">{children}</div>
    </section>
  );
}

export function Badge({ status, label }) {
  const color = STATUS_COLOR[status] || 'var(--muted)';
  return (
    <span class="badge" style={{ '--badge': color }} data-status={status}>
      <span class="dot" aria-hidden="true" />{label ?? String(status ?? 'unknown').replace('_', ' ')}
    </span>
  );
}

export function ScoreBar({ score, status }) {
  const v = Math.max(0, Math.min(1, score ?? 0));
  return (
    <div class="scorebar" role="meter" aria-valuemin="0" aria-valuemax="1" aria-valuenow={v}
      aria-label={`score ${v.toFixed(2)}`}>
      <div style={{ width: `${v * 100}%`, background: STATUS_COLOR[status] || 'var(--info)' }} />
    </div>
  );
}

// Renders the state of a useApi() call: spinner, "not available yet" (404/405), or error.
export function Pending({ res, what }) {
  if (res.loading && !res.data) return <p class="muted" aria-busy="true">Loading {what}…</p>;
  if (res.ok) return null;
  if (res.status === 404 || res.status === 405) {
    return <p class="notice" data-testid="unavailable">{what} is not available from this daemon yet ({res.error}).</p>;
  }
  return <p class="error-text" role="alert">Could not load {what}: {res.error}</p>;
}

export function KV({ rows }) {
  return (
    <dl class="kv">
      {rows.filter(Boolean).map(([k, v]) => [<dt>{k}</dt>, <dd>{v ?? '—'}</dd>])}
    </dl>
  );
}

export function Empty({ children }) {
  return <p class="muted empty">{children}</p>;
}

export function ErrorFeed({ errors, testid = 'error-feed' }) {
  if (!errors || !errors.length) return <Empty>No errors recorded. </Empty>;
  return (
    <ul class="feed" data-testid={testid}>
      {errors.map((e) => (
        <li>
          <span class="feed-time">{fmtTime(e.at)}</span>
          <span class="tag">{e.stage || e.category}</span>
          <span class="feed-msg">{e.message}</span>
        </li>
      ))}
    </ul>
  );
}

export function Json({ value }) {
  return <pre class="json">{JSON.stringify(value, null, 2)}</pre>;
}

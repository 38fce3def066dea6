// Memories: the real recall as search, filters, and a detail pane with provenance,
// history, entities, supersession chain, timeline, and edit / pin / forget / recover.
import { useEffect, useState } from 'preact/hooks';
import { api, useApi, items, qs } from '../api.js';
import { Card, Pending, KV, Empty, fmtTime, fmtNum, short, Badge } from '../ui.jsx';

const TYPES = ['', 'fact', 'preference', 'decision', 'procedural', 'semantic', 'constraint', 'gotcha',
  'error_pattern', 'pattern', 'dead_end', 'workflow_recipe', 'module_insight', 'work_state', 'document_chunk'];

export function MemoriesTab({ arg, navigate }) {
  const [query, setQuery] = useState('');
  const [filters, setFilters] = useState({ project: '', type: '', include_deleted: false, include_superseded: true });
  const [page, setPage] = useState(0);
  const [results, setResults] = useState(null);
  const [searching, setSearching] = useState(false);
  const [version, setVersion] = useState(0);
  const [showWeak, setShowWeak] = useState(false);
  const pageSize = 25;
  const listPath = `/api/memory${qs({ limit: pageSize, offset: page * pageSize, project: filters.project,
    type: filters.type, include_deleted: filters.include_deleted, include_superseded: filters.include_superseded,
    v: version })}`;
  const list = useApi(results ? null : listPath);

  const search = async (ev) => {
    ev && ev.preventDefault();
    if (!query.trim()) { setResults(null); return; }
    setSearching(true);
    const body = { query: query.trim(), limit: 50, include_superseded: filters.include_superseded };
    if (filters.project) body.project = filters.project;
    if (filters.type) body.types = [filters.type];
    const res = await api('/api/memory/recall', { method: 'POST', body });
    setSearching(false);
    setShowWeak(false);
    setResults(res);
  };
  useEffect(() => { if (results) search(); }, [filters]);  // re-run a search when filters change

  const hits = results ? items(results.data, 'results') : [];
  const confident = hits.filter((m) => CONFIDENT.has(m.match || 'likely'));
  const weak = hits.length - confident.length;
  const rows = results ? (showWeak ? hits : confident) : items(list.data, 'items');
  const total = results ? rows.length : list.data?.total ?? 0;
  const set = (k) => (ev) => { setPage(0); setFilters({ ...filters, [k]: ev.target.type === 'checkbox' ? ev.target.checked : ev.target.value }); };

  return (
    <div class={`split ${arg ? 'with-detail' : ''}`}>
      <div class="pane">
        <form class="toolbar" role="search" onSubmit={search}>
          <label class="grow">
            <span class="sr-only">Search memories</span>
            <input type="search" data-search placeholder="Search memories (recall) — press / to focus"
              value={query} onInput={(e) => setQuery(e.target.value)} data-testid="memory-search" />
          </label>
          <button type="submit" disabled={searching}>{searching ? 'Searching…' : 'Search'}</button>
          {results && <button type="button" class="ghost" onClick={() => { setQuery(''); setResults(null); }}>Clear</button>}
        </form>
        <div class="toolbar filters">
          <label>Project <input value={filters.project} onChange={set('project')} size="12" placeholder="any" /></label>
          <label>Type
            <select value={filters.type} onChange={set('type')}>
              {TYPES.map((t) => <option value={t}>{t || 'any'}</option>)}
            </select>
          </label>
          <label><input type="checkbox" checked={filters.include_superseded} onChange={set('include_superseded')} /> superseded</label>
          {!results && <label><input type="checkbox" checked={filters.include_deleted} onChange={set('include_deleted')} /> forgotten</label>}
        </div>
        {results ? (!results.ok && <p class="error-text" role="alert">Search failed: {results.error}</p>) : <Pending res={list} what="memories" />}
        <p class="muted small" data-testid="memory-count">
          {results ? (confident.length ? `${confident.length} confident match${confident.length === 1 ? '' : 'es'} for “${query}”`
            : `No confident match for “${query}”`) : `${total} memories`}
          {results && weak > 0 && ' — '}
          {results && weak > 0 && (
            <button type="button" class="link" data-testid="toggle-weak" onClick={() => setShowWeak(!showWeak)}>
              {showWeak ? 'hide weak matches' : `show ${weak} weak match${weak === 1 ? '' : 'es'}`}</button>)}
        </p>
        <ul class="list" data-testid="memory-list" aria-label="Memories">
          {rows.map((m) => (
            <li>
              <a href={`#/memories/${m.id}`} class={`row-link ${arg === m.id ? 'active' : ''}`} data-memory-id={m.id}>
                <span class="tag">{m.type}</span>
                {m.pinned && <span class="tag pin" title="pinned">pinned</span>}
                {m.superseded_by && <span class="tag muted-tag">superseded</span>}
                {m.is_deleted ? <span class="tag bad-tag">forgotten</span> : null}
                <span class="row-text">{short(m.content, 160)}</span>
                {results && <span class={`tag match match-${m.match || 'likely'}`} data-testid="recall-match"
                  title={MATCH_HELP[m.match || 'likely']}>{m.match || 'likely'} match</span>}
                <span class="row-meta">{m.project || '—'}{results ? '' : ` · ${fmtTime(m.created_at)}`}</span>
                {results && <Legs legs={m.legs} reasons={m.reasons} />}
              </a>
            </li>
          ))}
        </ul>
        {!rows.length && !list.loading && (!results && list.ok && total === 0 && !filters.project && !filters.type
          ? <FirstRun /> : <Empty>{results && weak ? 'Nothing here answers this confidently.' : 'No memories match.'}</Empty>)}
        {!results && total > pageSize && (
          <div class="pager">
            <button disabled={page === 0} onClick={() => setPage(page - 1)}>← Prev</button>
            <span>page {page + 1} / {Math.ceil(total / pageSize)}</span>
            <button disabled={(page + 1) * pageSize >= total} onClick={() => setPage(page + 1)}>Next →</button>
          </div>
        )}
      </div>
      {arg && <MemoryDetail id={arg} onClose={() => navigate('memories')} onChanged={() => setVersion(version + 1)} navigate={navigate} />}
    </div>
  );
}

const LEG_NAMES = { bm25: 'words', vector: 'meaning', graph: 'knowledge graph',
  context: 'recorded next to a strong hit in the same session' };
// retrieval/match.py: how well a hit answers the query (the daemon says which; the rule is its docstring's)
const CONFIDENT = new Set(['strong', 'likely']);
const MATCH_HELP = {
  strong: 'Close in meaning to your search (similarity 0.50 or more, or 0.45 with shared words).',
  likely: 'Related in meaning (0.35 or more), or shared words and some relation (0.20 or more).',
  weak: 'Ranked, but probably not an answer.',
};

// Which retrieval legs found a recalled memory (words, meaning, graph; the rank in the title) and why it ranks.
function Legs({ legs, reasons }) {
  const found = Object.entries(legs || {});
  if (!found.length && !(reasons || []).length) return null;
  return (
    <span class="legs" data-testid="recall-legs">
      {found.map(([leg, v]) => (
        <span class={`chip leg leg-${leg}`} data-leg={leg}
          title={`found by ${LEG_NAMES[leg] || leg}${v.rank ? `, rank ${v.rank}` : ''}`}>
          {LEG_NAMES[leg] || leg}
        </span>
      ))}
      {(reasons || []).length > 0 && <span class="reasons muted small">{reasons.join(' · ')}</span>}
    </span>
  );
}

// The empty store: what to do first.
function FirstRun() {
  return (
    <section class="card first-run" data-testid="first-run">
      <h3>No memories yet</h3>
      <p>kenning fills up as your agent works. Pick one to start:</p>
      <ol>
        <li><code>kenning connect claude-code</code> — Claude Code then recalls at each prompt and remembers what it learns.</li>
        <li><code>kenning ingest git</code> — inside a repository: its commit history becomes searchable memory.</li>
        <li><code>kenning remember "We deploy with scripts/deploy.sh"</code> — store a first fact yourself.</li>
      </ol>
      <p class="muted small">Search above recalls with keywords and meaning together, and shows which of them found each memory.</p>
    </section>
  );
}

function MemoryDetail({ id, onClose, onChanged, navigate }) {
  const [v, setV] = useState(0);
  const mem = useApi(`/api/memory/${encodeURIComponent(id)}?v=${v}`);
  const timeline = useApi(`/api/timeline/${encodeURIComponent(id)}?limit=100&v=${v}`);
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState({});
  const [message, setMessage] = useState(null);
  const [chain, setChain] = useState([]);

  useEffect(() => {
    const onKey = (ev) => { if (ev.key === 'Escape' && !editing) onClose(); };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [editing]);

  useEffect(() => {  // follow superseded_by forward to the current winner
    let cancelled = false;
    (async () => {
      const out = [];
      let next = mem.data?.superseded_by;
      while (next && out.length < 10) {
        const res = await api(`/api/memory/${encodeURIComponent(next)}`);
        if (!res.ok) { out.push({ id: next, missing: true }); break; }
        out.push(res.data);
        next = res.data.superseded_by;
      }
      if (!cancelled) setChain(out);
    })();
    return () => { cancelled = true; };
  }, [mem.data?.id, mem.data?.superseded_by]);

  const m = mem.data;
  const act = async (label, path, method, body) => {
    const res = await api(path, { method, body });
    setMessage(res.ok ? `${label}: done` : `${label} failed: ${res.error}`);
    if (res.ok) { setV(v + 1); onChanged(); }
    return res;
  };
  const save = async (ev) => {
    ev.preventDefault();
    const body = {};
    if (draft.content !== m.content) body.content = draft.content;
    if (draft.importance !== m.importance) body.importance = Number(draft.importance);
    const tags = draft.tags.split(',').map((t) => t.trim()).filter(Boolean);
    if (tags.join(',') !== (m.tags || []).join(',')) body.tags = tags;
    if (draft.type !== m.type) body.type = draft.type;
    if (!Object.keys(body).length) { setEditing(false); return; }
    const res = await act('Saved', `/api/memory/${encodeURIComponent(id)}`, 'PATCH', body);
    if (res.ok) setEditing(false);
  };
  const startEdit = () => {
    setDraft({ content: m.content, importance: m.importance, tags: (m.tags || []).join(', '), type: m.type });
    setEditing(true);
  };
  const supersedes = (timeline.data?.events || []).filter((e) => e.source === 'history' && e.details?.changes?.superseded_by);

  return (
    <aside class="pane detail" aria-label="Memory detail" data-testid="memory-detail">
      <div class="detail-head">
        <h2>Memory <code>{id}</code></h2>
        <button class="ghost" onClick={onClose} aria-label="Close detail (Esc)">✕</button>
      </div>
      <Pending res={mem} what="this memory" />
      {m && (
        <div>
          {message && <p class="flash" role="status">{message}</p>}
          {editing ? (
            <form onSubmit={save} class="edit-form">
              <label>Content<textarea rows="5" value={draft.content} onInput={(e) => setDraft({ ...draft, content: e.target.value })} /></label>
              <label>Type<input value={draft.type} onInput={(e) => setDraft({ ...draft, type: e.target.value })} /></label>
              <label>Importance<input type="number" min="0" max="1" step="0.05" value={draft.importance}
                onInput={(e) => setDraft({ ...draft, importance: e.target.value })} /></label>
              <label>Tags (comma separated)<input value={draft.tags} onInput={(e) => setDraft({ ...draft, tags: e.target.value })} /></label>
              <div class="row-buttons"><button type="submit">Save</button>
                <button type="button" class="ghost" onClick={() => setEditing(false)}>Cancel</button></div>
            </form>
          ) : <blockquote class="content" data-testid="memory-content">{m.content}</blockquote>}
          <div class="row-buttons">
            {!editing && <button onClick={startEdit}>Edit</button>}
            <button onClick={() => act(m.pinned ? 'Unpinned' : 'Pinned', `/api/memory/${encodeURIComponent(id)}`, 'PATCH', { pinned: !m.pinned })}>
              {m.pinned ? 'Unpin' : 'Pin'}
            </button>
            {m.is_deleted
              ? <button onClick={() => act('Recovered', `/api/memory/${encodeURIComponent(id)}/recover`, 'POST')}>Recover</button>
              : <button class="danger" onClick={() => act('Forgotten', `/api/memory/${encodeURIComponent(id)}?reason=dashboard`, 'DELETE')}>Forget</button>}
          </div>
          <Card title="Provenance">
            <KV rows={[
              ['type', m.type], ['project', m.project], ['scope', m.scope], ['source', m.source],
              ['session', m.session_key ? <a href={`#/sessions/${m.session_key}`}>{m.session_key}</a> : '—'],
              ['importance', fmtNum(m.importance)], ['confidence', fmtNum(m.confidence)],
              m.lifecycle ? ['trust', <span data-testid="memory-trust"><Badge status={m.lifecycle.trust === 'review' ? 'degraded' : 'healthy'} label={m.lifecycle.trust} />
                {` now ${fmtNum(m.lifecycle.current_confidence)} · half-life ${m.lifecycle.half_life_days ?? 'never'}`}
                {m.lifecycle.prunes_after ? ` · pruned after ${fmtTime(m.lifecycle.prunes_after)}` : ''}</span>] : null,
              ['tags', (m.tags || []).join(', ') || '—'], ['files', (m.related_files || []).join(', ') || '—'],
              ['created', fmtTime(m.created_at)], ['updated', fmtTime(m.updated_at)],
              ['accessed', `${m.access_count ?? 0}× (last ${fmtTime(m.last_accessed_at)})`],
              ['extraction model', m.extraction_model], ['embedding model', m.embedding_model],
              ['status', m.is_deleted ? <Badge status="unhealthy" label="forgotten" /> : (m.superseded_by ? <Badge status="degraded" label="superseded" /> : <Badge status="healthy" label="live" />)],
              ['review', <span data-testid="memory-review">{m.metadata?.review?.status
                ? <Badge status={m.metadata.review.status === 'rejected' ? 'unhealthy' : 'healthy'} label={m.metadata.review.status} />
                : (m.needs_review ? <><Badge status="degraded" label="needs review" /> <a href="#/review">review →</a></> : (m.user_verified ? 'verified' : '—'))}</span>],
              m.metadata?.claim ? ['evidence', <span data-testid="memory-evidence">{[m.metadata.claim.rule,
                m.metadata.claim.speaker ? `said by ${m.metadata.claim.speaker}` : null,
                m.metadata.claim.accepted ? 'accepted by the user' : null,
                m.metadata.claim.repetition > 1 ? `repeated ×${m.metadata.claim.repetition}` : null,
                m.metadata.claim.confidence != null ? `claim confidence ${fmtNum(m.metadata.claim.confidence)}` : null,
              ].filter(Boolean).join(' · ')}</span>] : null,
            ]} />
          </Card>
          <Card title="Supersession chain">
            {!chain.length && !supersedes.length && <Empty>Not superseded, supersedes nothing recorded.</Empty>}
            <ol class="chain" data-testid="supersession-chain">
              {supersedes.map((e) => <li>superseded {e.details.memory_id} ({fmtTime(e.at)})</li>)}
              {chain.length > 0 && <li><strong>this memory</strong></li>}
              {chain.map((c) => (
                <li>→ {c.missing ? <span class="error-text">{c.id} (missing)</span>
                  : <a href={`#/memories/${c.id}`}>{short(c.content, 80)}</a>}</li>
              ))}
            </ol>
          </Card>
          <Card title="Entities">
            {timeline.ok ? (
              items(timeline.data, 'entities').length
                ? <ul class="chips" data-testid="memory-entities">{items(timeline.data, 'entities').map((e) => (
                  <li><a href={`#/graph/${encodeURIComponent(e.id)}`} class="chip">{e.name} <small>{e.entity_type}</small></a></li>
                ))}</ul>
                : <Empty>No entities linked.</Empty>
            ) : <Pending res={timeline} what="entities" />}
          </Card>
          <Card title="History">
            <ul class="feed" data-testid="memory-history">
              {(m.history || []).map((h) => (
                <li><span class="feed-time">{fmtTime(h.created_at)}</span><span class="tag">{h.event}</span>
                  <span class="feed-msg">{h.actor || ''}{h.reason ? ` — ${h.reason}` : ''}</span></li>
              ))}
            </ul>
          </Card>
          <Card title="Timeline">
            <Pending res={timeline} what="timeline" />
            <ul class="feed">
              {(timeline.data?.events || []).map((e) => (
                <li><span class="feed-time">{fmtTime(e.at)}</span><span class="tag">{e.source}:{e.event}</span>
                  <span class="feed-msg">{short(e.summary, 140)}</span></li>
              ))}
            </ul>
          </Card>
        </div>
      )}
    </aside>
  );
}

// Comparison inspector: both ranked lists side by side, what was injected, judge relevance,
// FTS overlay and FTS-only misses, confidence gate and EMA decisions, judge reasoning,
// topic-diversity adjustments (predictive-memory-scorer seed §4.6).
import { useEffect } from 'preact/hooks';
import { useApi, items } from '../api.js';
import { Card, Pending, KV, Badge, Empty, fmtNum, fmtTime, short } from '../ui.jsx';

function parse(v) {
  if (typeof v !== 'string') return v;
  try { return JSON.parse(v); } catch { return v; }
}

function RankedList({ title, ids, rowsById, relevance, testid }) {
  return (
    <div class="ranked" data-testid={testid}>
      <h4>{title}</h4>
      <ol>
        {ids.map((id) => {
          const r = rowsById[id] || {};
          const rel = relevance[id];
          return (
            <li class={r.was_injected ? 'injected' : ''}>
              <a href={`#/memories/${id}`}>{short(r.content_preview || r.content || id, 70)}</a>
              <span class="chips-inline">
                {r.was_injected ? <span class="tag ok-tag" title="injected">injected</span> : null}
                {(r.fts_hit_count || 0) > 0 ? <span class="tag info-tag" title="also matched by search during the session">FTS ×{r.fts_hit_count}</span> : null}
                {rel !== undefined ? <span class="tag" title="judge relevance">rel {fmtNum(rel)}</span> : null}
                {r.diversity_factor != null && r.diversity_factor < 1 ? <span class="tag warn-tag" title="topic diversity attenuation">div ×{fmtNum(r.diversity_factor)}</span> : null}
              </span>
            </li>
          );
        })}
      </ol>
      {!ids.length && <Empty>empty</Empty>}
    </div>
  );
}

export function Inspector({ id, gate = 0.6, onClose }) {
  const res = useApi(`/api/predictor/comparisons/${encodeURIComponent(id)}`);
  const c = res.data?.comparison || res.data || null;
  const sessionKey = c?.session_key;
  const audit = useApi(sessionKey ? `/api/predictor/audit/${encodeURIComponent(sessionKey)}` : null);
  useEffect(() => {
    const onKey = (ev) => { if (ev.key === 'Escape') onClose(); };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  if (!res.ok) return <Card title="Comparison"><Pending res={res} what={`comparison ${id}`} /></Card>;
  const a = audit.data || {};
  const rows = [...items(res.data, 'memories', 'candidates', 'session_memories'), ...items(a, 'candidates', 'memories', 'rows', 'session_memories')];
  const rowsById = {};
  for (const r of rows) rowsById[r.memory_id] = { ...rowsById[r.memory_id], ...r };
  const relevance = parse(c.relevance_scores) || {};
  const predictorIds = parse(c.predictor_top_ids) || [];
  const baselineIds = parse(c.baseline_top_ids) || [];
  const ftsOnly = rows.filter((r) => r.source === 'fts_only').filter((r, i, arr) => arr.findIndex((x) => x.memory_id === r.memory_id) === i);
  const diversity = Object.values(rowsById).filter((r) => r.diversity_factor != null && r.diversity_factor < 1);
  const score = a.score || a.session_score || a.continuity || res.data?.session_score || {};
  const reasoning = score.continuity_reasoning || score.reasoning || a.continuity_reasoning || res.data?.continuity_reasoning || c.continuity_reasoning;
  const confidence = c.scorer_confidence;
  const passed = typeof a.confidence_gate_passed === 'boolean' ? a.confidence_gate_passed
    : (confidence != null ? confidence >= gate : null);
  const win = c.winner || (c.margin === 0 ? 'tie' : (c.margin > 0 ? 'predictor' : 'baseline'));
  return (
    <Card title={`Comparison — session ${sessionKey}`} class="inspector" testid="comparison-inspector"
      actions={<button class="ghost" onClick={onClose} aria-label="Close inspector (Esc)">✕</button>}>
      <div class="grid three">
        <KV rows={[
          ['winner', <Badge status={win === 'predictor' ? 'healthy' : (win === 'baseline' ? 'unhealthy' : 'disabled')} label={win} />],
          ['predictor NDCG@10', fmtNum(c.predictor_ndcg, 3)], ['baseline NDCG@10', fmtNum(c.baseline_ndcg, 3)],
          ['margin', fmtNum(c.margin, 3)], ['when', fmtTime(c.created_at)],
        ]} />
        <KV rows={[
          ['judge confidence', fmtNum(confidence)],
          ['confidence gate', <span data-testid="gate-decision">{passed === null ? '—' : (passed
            ? `passed (≥ ${gate})` : `failed: ${fmtNum(confidence)} < ${gate}, excluded from learning signal`)}</span>],
          ['EMA', <span data-testid="ema-decision">{c.ema_updated ? `updated → success rate ${fmtNum(c.success_rate, 3)}` : 'not updated (session excluded)'}</span>],
          ['α after', fmtNum(c.alpha, 3)],
        ]} />
        <KV rows={[
          ['FTS overlap', fmtNum(c.fts_overlap_score)],
          ['FTS-only misses', ftsOnly.length], ['diversity adjustments', diversity.length],
          ['judge', score.judge],
        ]} />
      </div>
      <div class="grid two">
        <RankedList title="Predictor ranking" ids={predictorIds} rowsById={rowsById} relevance={relevance} testid="predictor-list" />
        <RankedList title="Baseline ranking" ids={baselineIds} rowsById={rowsById} relevance={relevance} testid="baseline-list" />
      </div>
      {ftsOnly.length > 0 && (
        <div>
          <h4>FTS-only: searched for, not in the candidate pool (missed by the pre-filter)</h4>
          <ul class="feed" data-testid="fts-only">{ftsOnly.map((r) => <li><a href={`#/memories/${r.memory_id}`}>{short(r.content_preview || r.memory_id, 120)}</a> <span class="tag">FTS ×{r.fts_hit_count}</span></li>)}</ul>
        </div>
      )}
      {diversity.length > 0 && (
        <div>
          <h4>Topic diversity adjustments</h4>
          <ul class="feed">{diversity.map((r) => <li>{short(r.content_preview || r.memory_id, 100)} <span class="tag warn-tag">×{fmtNum(r.diversity_factor)}</span></li>)}</ul>
        </div>
      )}
      <h4>Judge reasoning</h4>
      <Pending res={audit} what="session audit" />
      <p class="reasoning" data-testid="judge-reasoning">{reasoning || 'No reasoning recorded.'}</p>
    </Card>
  );
}

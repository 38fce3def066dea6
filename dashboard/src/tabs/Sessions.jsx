// Sessions: list, and per session the candidates (what was injected and why), agent
// feedback, continuity score with the judge's reasoning, and the session timeline.
import { useEffect, useState } from 'preact/hooks';
import { useApi, items, qs } from '../api.js';
import { Card, Pending, KV, Empty, Badge, fmtTime, fmtNum, short } from '../ui.jsx';

export function sessionCandidates(detail, audit) {
  const fromDetail = items(detail, 'candidates', 'memories', 'session_memories');
  if (fromDetail.length) return fromDetail;
  return items(audit, 'candidates', 'memories', 'rows', 'session_memories');
}

// When a memory was shown to the agent: 'at start', 'at prompt 2'.
function shownWhen(phase) {
  if (phase === 'session-start') return 'at start';
  if (phase && phase.startsWith('prompt:')) return `at prompt ${phase.slice(7)}`;
  return phase || 'yes';
}

export function CandidateTable({ rows, testid = 'candidates' }) {
  if (!rows.length) return <Empty>No candidates recorded for this session.</Empty>;
  return (
    <div class="table-wrap">
      <table class="table" data-testid={testid}>
        <thead><tr>
          <th>rank</th><th>memory</th><th title="given to the agent">shown</th><th>found by</th>
          <th title="ranking before the learned scorer">baseline</th><th title="the learned scorer's estimate">learned scorer</th>
          <th>final</th><th title="how relevant the session judged it">relevance</th><th title="the agent's own rating">agent rated</th>
          <th title="times the session's prompts matched it by keyword">keyword hits</th>
        </tr></thead>
        <tbody>
          {rows.map((r) => (
            <tr class={r.was_injected ? 'injected' : ''}>
              <td>{r.rank}</td>
              <td class="mem"><a href={`#/memories/${r.memory_id}`}>{short(r.content_preview || r.content || r.memory_id, 90)}</a></td>
              <td>{r.was_injected ? <Badge status="healthy" label={shownWhen(r.inject_phase)} /> : <span class="muted">no</span>}</td>
              <td class="small">{[r.source, r.prefilter_source, r.similarity != null ? `sim ${fmtNum(r.similarity)}` : null,
                r.diversity_factor != null && r.diversity_factor !== 1 ? `diversity ×${fmtNum(r.diversity_factor)}` : null]
                .filter(Boolean).join(' · ')}</td>
              <td>{fmtNum(r.effective_score, 3)}{r.baseline_rank != null ? ` (#${r.baseline_rank})` : ''}</td>
              <td>{fmtNum(r.predictor_score, 3)}{r.predictor_rank != null ? ` (#${r.predictor_rank})` : ''}</td>
              <td>{fmtNum(r.final_score, 4)}</td>
              <td>{fmtNum(r.relevance_score)}</td>
              <td>{r.agent_feedback_count ? `${fmtNum(r.agent_relevance_score)} (${r.agent_feedback_count}×)` : '—'}</td>
              <td>{r.fts_hit_count || 0}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function ContinuityCard({ score }) {
  if (!score) return <Card title="Continuity"><Empty>Not scored yet (scored after session end).</Empty></Card>;
  let missing = score.missing_topics;
  if (typeof missing === 'string') { try { missing = JSON.parse(missing); } catch { missing = [missing]; } }
  return (
    <Card title="Continuity" testid="continuity">
      <KV rows={[
        ['score', <strong>{fmtNum(score.score)}</strong>], ['confidence', fmtNum(score.confidence)],
        ['scored by', score.judge === 'heuristic' ? "the session's words (no LLM)" : score.judge === 'llm' ? 'the LLM' : score.judge], ['recalled / used', `${score.memories_recalled ?? '—'} / ${score.memories_used ?? '—'}`],
        ['novel context', score.novel_context_count], ['missing topics', (missing || []).join(', ') || '—'],
      ]} />
      <h4>Reasoning</h4>
      <p class="reasoning" data-testid="continuity-reasoning">{score.continuity_reasoning || score.reasoning || '—'}</p>
    </Card>
  );
}

// What the observer saw in this session: live scratchpad, persisted signals, step injections.
export function ObserverCard({ res }) {
  if (res.status === 404) return <Card title="Observer"><Empty>No tool events observed for this session.</Empty></Card>;
  if (!res.ok) return <Card title="Observer"><Pending res={res} what="observer (/api/observer/sessions)" /></Card>;
  const o = res.data || {};
  const live = o.live || {};
  const done = o.finished || {};
  const signals = o.signals || [];
  const steps = o.step_injections || [];
  return (
    <Card title={`Observer — ${signals.length} signals, ${steps.length} step injections`} testid="observer">
      <KV rows={[
        ['steps', done.steps ?? live.step], ['session type', done.session_type],
        ['A/B group', done.ab_group], ['promoted', (done.promoted || []).length],
        ['reinforced', (done.reinforced || []).length],
        live.step != null ? ['live', `${live.files} files, ${live.edited} edited, ${live.open_errors} open errors`] : null,
      ]} />
      {signals.length > 0 && (
        <div class="table-wrap">
          <table class="table" data-testid="observer-signals">
            <thead><tr><th>signal</th><th>key</th><th>files</th><th>step</th><th>trust</th></tr></thead>
            <tbody>{signals.map((sg) => (
              <tr>
                <td><span class="tag">{sg.signal_class}</span></td>
                <td class="small">{short(sg.key, 70)}</td>
                <td class="small">{(sg.files || []).slice(0, 3).join(', ')}</td>
                <td>{sg.step}</td>
                <td>{sg.contaminated ? <Badge status="degraded" label="after web" /> : '—'}</td>
              </tr>
            ))}</tbody>
          </table>
        </div>
      )}
      {live.signals && Object.keys(live.signals).length > 0 && (
        <p class="small muted">live: {Object.entries(live.signals).map(([c, keys]) => `${c} ×${keys.length}`).join(' · ')}</p>
      )}
      <h4>Step injections</h4>
      {steps.length ? (
        <ul class="feed" data-testid="observer-steps">{steps.map((st) => (
          <li><span class="feed-time">{fmtTime(st.injected_at)}</span><span class="tag">{st.type}</span>
            <span class="feed-msg"><a href={`#/memories/${st.memory_id}`}>{short(st.content || st.memory_id, 160)}</a></span></li>
        ))}</ul>
      ) : <Empty>None.</Empty>}
    </Card>
  );
}

function SessionDetail({ sessionKey, onClose }) {
  const detail = useApi(`/api/sessions/${encodeURIComponent(sessionKey)}`);
  const audit = useApi(`/api/predictor/audit/${encodeURIComponent(sessionKey)}`);
  const timeline = useApi(`/api/timeline/${encodeURIComponent(sessionKey)}?limit=300`);
  const observer = useApi(`/api/observer/sessions/${encodeURIComponent(sessionKey)}`);
  useEffect(() => {
    const onKey = (ev) => { if (ev.key === 'Escape') onClose(); };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  const d = detail.data || {};
  const session = d.session || d;
  const score = d.score || d.continuity || audit.data?.score || audit.data?.continuity || audit.data?.session_score;
  const rows = sessionCandidates(detail.data, audit.data);
  const prompts = items(d.prompts || []);
  return (
    <aside class="pane detail wide" data-testid="session-detail" aria-label="Session detail">
      <div class="detail-head">
        <h2>Session <code>{sessionKey}</code></h2>
        <button class="ghost" onClick={onClose} aria-label="Close detail (Esc)">✕</button>
      </div>
      <Pending res={detail} what="session detail" />
      {detail.ok && (
        <Card title="Session">
          <KV rows={[['project', session.project], ['harness', session.harness], ['status', session.status],
            ['started', fmtTime(session.started_at)], ['ended', fmtTime(session.ended_at)], ['prompts', session.prompt_count],
            ['predictor', session.status_line]]} />
        </Card>
      )}
      <TaughtCard sessionKey={sessionKey} />
      <ContinuityCard score={score} />
      <Card title={`Memories offered (${rows.length}) — ${rows.filter((r) => r.was_injected).length} shown to the agent`}>
        <CandidateTable rows={rows} />
      </Card>
      <ObserverCard res={observer} />
      {prompts.length > 0 && (
        <Card title="Prompts">
          <ul class="feed">{prompts.map((p) => (
            <li><span class="feed-time">{fmtTime(p.created_at)}</span><span class="feed-msg">{short(p.prompt, 200)}</span>
              <span class="tag">{p.fts_hits} hits</span></li>
          ))}</ul>
        </Card>
      )}
      <Card title="Timeline">
        <Pending res={timeline} what="timeline" />
        <ul class="feed" data-testid="session-timeline">
          {(timeline.data?.events || []).map((e) => (
            <li><span class="feed-time">{fmtTime(e.at)}</span><span class={`tag src-${e.source}`}>{e.source}:{e.event}</span>
              <span class="feed-msg">{short(e.summary, 160)}</span></li>
          ))}
        </ul>
      </Card>
    </aside>
  );
}

// What a session wrote, by kind (core/written.py: the CLI's `kenning review -s learned` says the same).
const KINDS = ['episode', 'claim', 'commit', 'note'];
export function wroteLine(counts) {
  const parts = KINDS.filter((k) => counts && counts[k]).map((k) => `${counts[k]} ${counts[k] === 1 ? k : `${k}s`}`);
  return parts.length ? `wrote ${parts.join(', ')}` : 'wrote nothing';
}

// What a session was about (its task: first prompt, else context) and what it wrote.
function aboutLine(a) {
  if (!a) return null;
  const wrote = wroteLine(a.wrote) + (a.pending ? ` (${a.pending} to review)` : '');
  return [a.harness, wrote].filter(Boolean).join(' · ');
}

function TaughtCard({ sessionKey }) {
  const learned = useApi(`/api/review${qs({ status: 'learned', session_key: sessionKey, limit: 100 })}`);
  const mems = (learned.data?.sessions || []).flatMap((g) => g.memories);
  const counts = {};
  for (const m of mems) counts[m.kind] = (counts[m.kind] || 0) + 1;
  return (
    <Card title={`What it wrote — ${wroteLine(counts).replace(/^wrote /, '')}`} testid="session-taught">
      <Pending res={learned} what="what the session wrote (/api/review)" />
      {learned.ok && !mems.length && <Empty>This session wrote no memory.</Empty>}
      <ul class="feed">{mems.map((m) => (
        <li><span class="tag">{m.kind}</span>{m.type !== m.kind && <span class="tag">{m.type}</span>}
          <span class="feed-msg"><a href={`#/memories/${m.id}`}>{short(m.content, 160)}</a></span>
          <Badge status={m.review?.status === 'rejected' ? 'unhealthy' : (m.needs_review ? 'degraded' : 'healthy')}
            label={m.review?.status || (m.needs_review ? 'needs review' : 'kept')} /></li>
      ))}</ul>
      {mems.some((m) => m.needs_review) && <p class="small"><a href="#/review">Review them →</a></p>}
    </Card>
  );
}

export function SessionsTab({ arg, navigate }) {
  const [page, setPage] = useState(0);
  const [project, setProject] = useState('');
  const size = 30;
  const list = useApi(`/api/sessions${qs({ limit: size, offset: page * size, project })}`, 10000);
  const rows = items(list.data, 'sessions', 'items');
  const total = list.data?.total ?? rows.length;
  const keys = rows.map((s) => s.session_key).join(',');
  const about = useApi(keys ? `/api/review/sessions${qs({ keys })}` : null);
  const aboutOf = about.data?.sessions || {};
  return (
    <div class={`split ${arg ? 'with-detail' : ''}`}>
      <div class="pane">
        <div class="toolbar">
          <label>Project <input value={project} onChange={(e) => { setPage(0); setProject(e.target.value); }} placeholder="any" /></label>
          <span class="muted small">{total} sessions</span>
        </div>
        <Pending res={list} what="sessions (/api/sessions)" />
        <ul class="list" data-testid="session-list">
          {rows.map((s) => (
            <li>
              <a class={`row-link ${arg === s.session_key ? 'active' : ''}`} href={`#/sessions/${encodeURIComponent(s.session_key)}`}>
                <span class="tag">{s.status || 'session'}</span>
                <span class="row-text">
                  <span class="session-task" data-testid="session-task">{short(aboutOf[s.session_key]?.task || 'no task recorded', 120)}</span>
                  <code class="small">{s.session_key}</code> {s.project ? `· ${s.project}` : ''}
                </span>
                <span class="row-meta" data-testid="session-about">{aboutLine(aboutOf[s.session_key]) ? `${aboutLine(aboutOf[s.session_key])} · ` : ''}
                  {fmtTime(s.started_at)} · {s.prompt_count ?? 0} prompts
                  {s.score != null ? ` · continuity ${fmtNum(s.score)}` : ''}{s.confidence != null ? ` (confidence ${fmtNum(s.confidence)})` : ''}</span>
              </a>
            </li>
          ))}
        </ul>
        {list.ok && !rows.length && <Empty>No sessions yet. Connect a harness: <code>kenning connect claude-code</code>.</Empty>}
        {total > size && (
          <div class="pager">
            <button disabled={page === 0} onClick={() => setPage(page - 1)}>← Prev</button>
            <span>page {page + 1}</span>
            <button disabled={(page + 1) * size >= total} onClick={() => setPage(page + 1)}>Next →</button>
          </div>
        )}
      </div>
      {arg && <SessionDetail sessionKey={arg} onClose={() => navigate('sessions')} />}
    </div>
  );
}

// Pipeline: workers, queue depths, dead jobs, token budget, latency percentiles, errors, logs.
import { useState } from 'preact/hooks';
import { useApi, items, qs } from '../api.js';
import { Card, Pending, Empty, ErrorFeed, Badge, KV, ScoreBar, fmtTime, fmtNum, short } from '../ui.jsx';

function workerStatus(w) {
  if (w === null || typeof w !== 'object' || w.disabled) return 'disabled';
  if (w.running === false || w.alive === false) return 'unhealthy';
  if (w.running || w.alive || w.state === 'running') return 'healthy';
  return 'degraded';
}

const WORKER_KEYS = ['processed', 'failed', 'dead', 'deferred', 'errors', 'queue_depth', 'interval_s'];

function Workers({ workers }) {
  const entries = Object.entries(workers || {});
  if (!entries.length) return <Empty>No workers reported.</Empty>;
  return (
    <div class="table-wrap">
      <table class="table" data-testid="workers">
        <thead><tr><th>worker</th><th>state</th><th>counters</th><th>last tick / error</th></tr></thead>
        <tbody>
          {entries.map(([name, w]) => (
            <tr>
              <td>{name}</td>
              <td><Badge status={workerStatus(w)} label={w?.disabled ? 'disabled' : (w?.running === false ? 'stopped' : (w?.state || (w?.running ? 'running' : 'idle')))} /></td>
              <td class="small">{WORKER_KEYS.filter((k) => w && w[k] !== undefined && w[k] !== null)
                .map((k) => `${k.replace('_s', ' s')} ${fmtNum(w[k])}`).join(' · ')}</td>
              <td class="small">{fmtTime(w?.last_tick_at)}{w?.waiting ? <div class="warn-text">{w.waiting}</div> : null}
                {w?.last_error ? <div class="error-text">{short(w.last_error, 120)}</div> : null}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function QueueTable({ queue }) {
  const byType = queue?.by_type;
  if (!byType) return <pre class="json">{JSON.stringify(queue, null, 2)}</pre>;
  const statuses = ['pending', 'leased', 'completed', 'dead'];
  return (
    <div>
      <table class="table" data-testid="queue-table">
        <thead><tr><th>job type</th>{statuses.map((x) => <th>{x}</th>)}</tr></thead>
        <tbody>
          {Object.entries(byType).map(([type, d]) => (
            <tr><td>{type}</td>{statuses.map((x) => <td class={x === 'dead' && d[x] ? 'error-text' : ''}>{d[x] ?? 0}</td>)}</tr>
          ))}
        </tbody>
      </table>
      <p class="small muted">stale leases {queue.stale_leases ?? 0} · oldest pending {queue.oldest_pending_age_s == null ? '—' : `${Math.round(queue.oldest_pending_age_s)} s`}</p>
    </div>
  );
}

function Budget({ budget }) {
  if (budget.daily_limit === undefined) return <pre class="json">{JSON.stringify(budget, null, 2)}</pre>;
  const used = budget.used_today || 0;
  const frac = budget.daily_limit ? used / budget.daily_limit : 0;
  return (
    <div>
      <ScoreBar score={1 - frac} status={budget.exhausted ? 'unhealthy' : (frac > 0.8 ? 'degraded' : 'healthy')} />
      <KV rows={[['used today', `${used.toLocaleString()} of ${budget.daily_limit ? budget.daily_limit.toLocaleString() : 'unlimited'} tokens`],
        ['remaining', budget.remaining?.toLocaleString?.() ?? '—'], ['resets', fmtTime(budget.resets_at)],
        budget.reason ? ['why', budget.reason] : null]} />
    </div>
  );
}

export function LatencyTable({ ops }) {
  const rows = Object.entries(ops || {});
  return (
    <table class="table" data-testid="latency-table">
      <thead><tr><th>operation</th><th>count</th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>max ms</th></tr></thead>
      <tbody>
        {rows.map(([op, s]) => (
          <tr class={s.count ? '' : 'muted'}><td>{op}</td><td>{s.count}</td><td>{fmtNum(s.p50, 1)}</td>
            <td>{fmtNum(s.p95, 1)}</td><td>{fmtNum(s.p99, 1)}</td><td>{fmtNum(s.max, 1)}</td></tr>
        ))}
      </tbody>
    </table>
  );
}

export function PipelineTab() {
  const status = useApi('/api/pipeline/status', 5000);
  const diag = useApi('/api/diagnostics/queue', 5000);
  const latency = useApi('/api/analytics/latency?recent=0', 5000);
  const [stage, setStage] = useState('');
  const errors = useApi(`/api/analytics/errors${qs({ stage, limit: 50 })}`, 5000);
  const [category, setCategory] = useState('');
  const logs = useApi(`/api/logs${qs({ category, limit: 50 })}`, 5000);
  const s = status.data || {};
  const queue = s.queue || s.queues || diag.data?.metrics?.tables;
  const dead = items(s.dead_jobs || s.dead || [], 'recent', 'items');
  const waiting = s.waiting || [];
  const budget = s.token_budget || s.llm_budget || s.llm || s.budget;
  return (
    <div class="grid two">
      <Card title="Workers" testid="pipeline-workers">
        <Pending res={status} what="/api/pipeline/status" />
        {status.ok && <p class="muted small">mode: <strong>{s.mode || '—'}</strong>
          {s.provider ? <span> · LLM {typeof s.provider === 'object' ? (s.provider.name || s.provider.provider || JSON.stringify(s.provider)) : s.provider}</span> : null}</p>}
        {waiting.length > 0 && <ul class="problems">{waiting.map((w) => <li class="problem warning">{w}</li>)}</ul>}
        {status.ok && <Workers workers={s.workers} />}
      </Card>
      <Card title="Queue" testid="pipeline-queue">
        {queue ? <QueueTable queue={queue} /> : <Pending res={diag} what="queue" />}
        {diag.ok && <p class="small">queue health <Badge status={diag.data.status} label={`${diag.data.status} ${diag.data.score.toFixed(2)}`} /> {diag.data.summary}</p>}
      </Card>
      <Card title="Dead jobs" testid="dead-jobs">
        {dead.length ? (
          <ul class="feed">{dead.map((j) => (
            <li><span class="tag">{j.job_type || j.kind}</span><span class="feed-msg">#{j.id} {short(j.last_error || j.error, 160)}</span>
              <span class="feed-time">{fmtTime(j.failed_at || j.updated_at)}</span></li>
          ))}</ul>
        ) : <Empty>No dead jobs{s.dead_jobs?.count ? ` shown (${s.dead_jobs.count} in total)` : ''}.</Empty>}
        {s.dead_jobs?.count > 0 && <p class="small">{s.dead_jobs.count} dead in total · requeue with <code>POST /api/pipeline/dead/requeue</code></p>}
      </Card>
      <Card title="Token budget" testid="token-budget">
        {budget ? <Budget budget={budget} /> : <Empty>No LLM budget reported (offline provider needs none).</Empty>}
      </Card>
      <Card title="Latency (p50 / p95 / p99)" class="span2">
        <Pending res={latency} what="latency" />
        {latency.ok && <LatencyTable ops={latency.data.operations} />}
      </Card>
      <Card title="Error feed" actions={
        <select aria-label="Error stage" value={stage} onChange={(e) => setStage(e.target.value)}>
          {['', 'extraction', 'decision', 'embedding', 'mutation', 'connector', 'predictor'].map((x) => <option value={x}>{x || 'all stages'}</option>)}
        </select>}>
        <Pending res={errors} what="errors" />
        {errors.ok && <ErrorFeed errors={errors.data.items} />}
      </Card>
      <Card title="Logs" actions={
        <select aria-label="Log category" value={category} onChange={(e) => setCategory(e.target.value)}>
          <option value="">all categories</option>
          {Object.keys(logs.data?.categories || {}).map((c) => <option value={c}>{c}</option>)}
        </select>}>
        <Pending res={logs} what="logs" />
        <ul class="feed" data-testid="log-feed">
          {(logs.data?.items || []).map((e) => (
            <li><span class="feed-time">{fmtTime(e.at)}</span><span class="tag">{e.category}</span>
              <span class={`feed-msg level-${e.level}`}>{short(e.message, 160)}</span></li>
          ))}
        </ul>
      </Card>
    </div>
  );
}

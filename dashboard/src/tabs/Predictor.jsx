// Predictor tab: cold-start mode (collecting training data) or active mode (earning
// influence), with the diagnostics badge and predictor error feed in both.
import { useMemo } from 'preact/hooks';
import { useApi, items, qs } from '../api.js';
import { Card, Pending, KV, Badge, Empty, ErrorFeed, ScoreBar, fmtNum, fmtTime, pct } from '../ui.jsx';
import { SplitGauge, WinLossTimeline, TrainingCurve, Sparkline } from './predictorCharts.jsx';
import { Inspector } from './Inspector.jsx';

const pick = (o, ...keys) => {
  for (const k of keys) if (o && o[k] !== undefined && o[k] !== null) return o[k];
  return undefined;
};

export function predictorMode(status, diag) {
  const mode = pick(status, 'mode', 'state', 'phase');
  if (['collecting', 'cold_start', 'cold-start'].includes(mode)) return 'cold_start';
  if (mode === 'disabled' && !status.first_training_done && !status.comparisons) return 'cold_start';
  if (mode) return 'active';
  const n = pick(status, 'training_sessions', 'scored_sessions') ?? diag?.metrics?.training_sessions ?? 0;
  const min = pick(status, 'min_training_sessions', 'min_sessions') ?? diag?.metrics?.min_training_sessions ?? 30;
  return n < min ? 'cold_start' : 'active';
}

function sidecarText(status) {
  const sc = status.sidecar || {};
  const running = sc.running ?? status.sidecar_alive;
  if (sc.disabled) return `disabled after ${sc.crashes_last_hour ?? '?'} crashes this hour`;
  if (running === false) return 'not running';
  if (running) return `running (pid ${sc.pid ?? status.sidecar_pid ?? '?'})`;
  return '—';
}

function HealthBadge({ diag }) {
  if (!diag.ok) return <Pending res={diag} what="predictor diagnostics" />;
  const d = diag.data;
  return (
    <div class="health-badge" data-testid="predictor-health">
      <Badge status={d.status} label={`${d.status.replace('_', ' ')} · ${Number(d.score).toFixed(2)}`} />
      <span class="small muted">{d.summary}</span>
      {d.problems.map((p) => <p class={`problem ${p.severity}`}>{p.message} — <em>{p.fix}</em></p>)}
    </div>
  );
}

function ColdStart({ status, diag, sessions }) {
  const m = diag.data?.metrics || {};
  const n = pick(status, 'training_sessions', 'scored_sessions') ?? m.training_sessions ?? 0;
  const min = pick(status, 'min_training_sessions', 'min_sessions') ?? m.min_training_sessions ?? 30;
  const frac = Math.min(1, n / Math.max(1, min));
  const rows = items(sessions.data, 'sessions', 'items');
  return (
    <div class="grid two" data-testid="predictor-cold-start">
      <Card title="Training data" class="span2">
        <p class="big-line" data-testid="cold-start-progress">Collecting training data: {Math.min(n, min)}/{min} sessions</p>
        <div class="progress" role="progressbar" aria-valuemin="0" aria-valuemax={min} aria-valuenow={n}
          aria-label="Scored sessions collected"><div style={{ width: `${frac * 100}%` }} /></div>
        <p class="muted small">{pct(frac)} — first prediction available after {min} scored sessions. Until then the baseline ranks alone.</p>
      </Card>
      <Card title="Recent sessions" testid="cold-start-sessions">
        <Pending res={sessions} what="sessions" />
        {rows.length ? (
          <table class="table">
            <thead><tr><th>session</th><th>continuity</th><th>confidence</th><th>when</th></tr></thead>
            <tbody>{rows.map((s) => (
              <tr>
                <td><a href={`#/sessions/${encodeURIComponent(s.session_key)}`}><code>{s.session_key}</code></a></td>
                <td>{fmtNum(pick(s, 'score', 'continuity_score'))}</td>
                <td>{(() => { const c = pick(s, 'confidence'); return c == null ? '—' : <span class={c >= 0.6 ? 'ok-text' : 'warn-text'}>{fmtNum(c)}</span>; })()}</td>
                <td>{fmtTime(s.started_at || s.created_at)}</td>
              </tr>
            ))}</tbody>
          </table>
        ) : (sessions.ok && <Empty>No sessions yet.</Empty>)}
      </Card>
      <Card title="Diagnostics">
        <KV rows={[
          ['sidecar', sidecarText(status)],
          ['mode', pick(status, 'mode') || '—'],
          ['enabled', String(pick(status, 'enabled') ?? '—')],
          ['score timeout', `${pick(status, 'score_timeout_ms') ?? status.config?.score_timeout_ms ?? 120} ms`],
          ['train every', `${status.config?.train_interval_sessions ?? '—'} sessions`],
          ['confidence gate', pick(status, 'confidence_gate', 'min_confidence') ?? 0.6],
          ['needed', `${Math.max(0, min - n)} more scored sessions`],
        ]} />
        <HealthBadge diag={diag} />
      </Card>
    </div>
  );
}

function StatusCard({ status, diag, latency, timedOut }) {
  const m = diag.data?.metrics || {};
  const projects = pick(status, 'project_success_rates', 'projects') || m.project_success_rates || {};
  const top = Array.isArray(projects) ? projects.slice(0, 3)
    : Object.entries(projects).slice(0, 3).map(([project, v]) => ({ project, ...(typeof v === 'object' ? v : { success_rate: v }) }));
  const lat = latency.data?.operations?.predictor_score || {};
  return (
    <Card title="Status" testid="predictor-status">
      <KV rows={[
        ['mode', pick(status, 'mode', 'state') || 'active'],
        ['success rate', fmtNum(pick(status, 'success_rate') ?? m.success_rate, 3)],
        ['α', fmtNum(pick(status, 'alpha') ?? m.alpha, 3)],
        ['model version', `v${pick(status, 'model_version') ?? m.model_version ?? 0}`],
        ['training pairs', pick(status, 'training_pairs', 'training_samples', 'training_sessions') ?? m.training_sessions],
        ['last trained', fmtTime(pick(status, 'last_trained_at') ?? m.last_trained_at)],
        ['parameters', pick(status, 'param_count', 'parameter_count', 'parameters')?.toLocaleString?.() ?? '—'],
        ['drift resets', pick(status, 'drift_resets') ?? m.drift_resets ?? 0],
        ['scorer drift signal', fmtNum(pick(status, 'scorer_drift_signal', 'drift_signal') ?? m.scorer_drift_signal, 3)],
        ['sidecar', sidecarText(status)],
        ['sidecar latency', `p50 ${fmtNum(lat.p50 ?? status.latency_ms?.p50, 1)} / p95 ${fmtNum(lat.p95 ?? status.latency_ms?.p95, 1)} ms`],
      ]} />
      <Sparkline samples={lat.recent || []} timeoutMs={pick(status, 'score_timeout_ms') ?? status.config?.score_timeout_ms ?? 120} timedOut={timedOut} />
      {top.length > 0 && (
        <div data-testid="project-rates">
          <h4>Per-project success rate</h4>
          {top.map((p) => (
            <div class="project-rate"><span>{p.project || '(none)'}</span>
              <ScoreBar score={p.success_rate} status={p.success_rate >= 0.5 ? 'healthy' : 'degraded'} />
              <span class="small">{fmtNum(p.success_rate)}{p.sessions != null ? ` · ${p.sessions} sessions` : ''}</span></div>
          ))}
        </div>
      )}
    </Card>
  );
}

function Active({ status, diag, arg, navigate, latency, errors }) {
  const comps = useApi('/api/predictor/comparisons?limit=200', 15000);
  const training = useApi('/api/predictor/training?limit=200', 30000);
  const list = items(comps.data, 'comparisons', 'items');
  const runs = items(training.data, 'runs', 'training', 'items');
  const resets = useMemo(() => items(training.data?.drift_resets || []).map((r) => r.created_at).filter(Boolean),
    [training.data]);
  const timedOut = (errors.data?.items || []).some((e) => /timeout/i.test(e.message));
  const gate = pick(status, 'confidence_gate', 'min_confidence') ?? 0.6;
  return (
    <div data-testid="predictor-active">
      <div class="grid two">
        <Card title="Influence split">
          <SplitGauge alpha={pick(status, 'alpha') ?? diag.data?.metrics?.alpha ?? 1} />
          <HealthBadge diag={diag} />
        </Card>
        <StatusCard status={status} diag={diag} latency={latency} timedOut={timedOut} />
      </div>
      <Card title={`Win/loss timeline (${list.length} sessions)`}>
        <Pending res={comps} what="comparisons" />
        {list.length ? <WinLossTimeline comparisons={list} resets={resets} onPick={(id) => navigate('predictor', id)} /> : comps.ok && <Empty>No comparisons yet.</Empty>}
      </Card>
      {arg && <Inspector id={arg} gate={gate} onClose={() => navigate('predictor')} />}
      <div class="grid two">
        <Card title="Training curve">
          <Pending res={training} what="training history" />
          {runs.length ? <TrainingCurve runs={runs} /> : training.ok && <Empty>No training runs yet.</Empty>}
        </Card>
        <Card title="Recent comparisons">
          <table class="table compact" data-testid="comparison-table">
            <thead><tr><th>session</th><th>winner</th><th>margin</th><th>conf</th><th>EMA</th></tr></thead>
            <tbody>{list.slice(0, 12).map((c) => (
              <tr class={arg === c.id ? 'active' : ''}>
                <td><a href={`#/predictor/${encodeURIComponent(c.id)}`} data-comparison-id={c.id}><code>{c.session_key}</code></a></td>
                <td>{c.winner || (c.margin > 0 ? 'predictor' : c.margin < 0 ? 'baseline' : 'tie')}</td>
                <td>{fmtNum(c.margin, 3)}</td><td>{fmtNum(c.scorer_confidence)}</td><td>{c.ema_updated ? 'yes' : 'no'}</td>
              </tr>
            ))}</tbody>
          </table>
        </Card>
      </div>
    </div>
  );
}

export function PredictorTab({ arg, navigate }) {
  const status = useApi('/api/predictor/status', 10000);
  const diag = useApi('/api/diagnostics/predictor', 10000);
  const latency = useApi('/api/analytics/latency?operation=predictor_score&recent=100', 10000);
  const errors = useApi(`/api/analytics/errors${qs({ stage: 'predictor', limit: 20 })}`, 10000);
  const sessions = useApi('/api/sessions?limit=10');
  const s = status.ok ? (status.data.status && typeof status.data.status === 'object' ? status.data.status : status.data) : {};
  const mode = predictorMode(s, diag.data);
  return (
    <div data-mode={mode}>
      <div class="headline">
        <h2>Predictor</h2>
        <Badge status={mode === 'cold_start' ? 'cold_start' : (diag.data?.status || 'healthy')} label={mode === 'cold_start' ? 'cold start' : 'active'} />
        {s.status_line && <code class="small">{s.status_line}</code>}
      </div>
      {!status.ok && <Pending res={status} what="/api/predictor/status" />}
      {mode === 'cold_start'
        ? <ColdStart status={s} diag={diag} sessions={sessions} />
        : <Active status={s} diag={diag} arg={arg} navigate={navigate} latency={latency} errors={errors} />}
      <Card title="Predictor errors">
        <Pending res={errors} what="predictor errors" />
        {errors.ok && <ErrorFeed errors={errors.data.items} testid="predictor-errors" />}
      </Card>
    </div>
  );
}

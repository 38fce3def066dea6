// Health: the composite score and one card per diagnostics domain, with each problem's fix.
import { useApi } from '../api.js';
import { Card, Badge, ScoreBar, Pending, fmtTime, fmtNum } from '../ui.jsx';

const ORDER = ['queue', 'storage', 'index', 'provider', 'mutation', 'duplicate', 'connector', 'predictor'];

export function DomainCard({ d, compact = false }) {
  return (
    <Card title={d.domain} class={`domain status-${d.status}`} testid={`domain-${d.domain}`}
      actions={<Badge status={d.status} />}>
      <ScoreBar score={d.score} status={d.status} />
      <p class="domain-score"><strong>{Number(d.score).toFixed(2)}</strong> <span class="muted">{d.summary}</span></p>
      {d.problems.length > 0 && (
        <ul class="problems">
          {d.problems.map((p) => (
            <li class={`problem ${p.severity}`}>
              <span class="problem-msg">{p.message}</span>
              <span class="problem-fix">Fix: {p.fix}</span>
            </li>
          ))}
        </ul>
      )}
      {!compact && (
        <details class="metrics"><summary>metrics</summary>
          <pre class="json">{JSON.stringify(d.metrics, null, 2)}</pre>
        </details>
      )}
    </Card>
  );
}

export function HealthTab() {
  const res = useApi('/api/diagnostics', 10000);
  const report = res.data;
  return (
    <div>
      <Pending res={res} what="diagnostics" />
      {res.ok && (
        <div>
          <div class="headline" data-testid="health-composite">
            <Badge status={report.composite.status} />
            <span class="big">{Math.round(report.composite.score * 100)}</span>
            <span class="muted">composite health · generated {fmtTime(report.generated_at)} · refreshes every 10 s</span>
          </div>
          <div class="grid cards">
            {ORDER.filter((k) => report.domains[k]).map((k) => <DomainCard d={report.domains[k]} />)}
          </div>
        </div>
      )}
    </div>
  );
}

// Predictor charts (ECharts): α split gauge, win/loss timeline with EMA line, training
// curve with version and drift markers, latency sparkline.
import { useMemo } from 'preact/hooks';
import { Chart, COLORS } from '../chart.jsx';
import { fmtNum, fmtTime } from '../ui.jsx';

export function SplitGauge({ alpha }) {
  const a = Math.max(0, Math.min(1, alpha ?? 1));
  const option = useMemo(() => ({
    grid: { left: 8, right: 8, top: 4, bottom: 4, containLabel: false },
    xAxis: { type: 'value', max: 1, show: false },
    yAxis: { type: 'category', data: ['influence'], show: false },
    tooltip: { trigger: 'item', formatter: (p) => `${p.seriesName}: ${(p.value * 100).toFixed(0)}%` },
    series: [
      { name: 'baseline (α)', type: 'bar', stack: 'a', data: [a], itemStyle: { color: COLORS.baseline },
        label: { show: a > 0.12, formatter: `baseline ${(a * 100).toFixed(0)}%`, color: '#fff' } },
      { name: 'predictor (1−α)', type: 'bar', stack: 'a', data: [1 - a], itemStyle: { color: COLORS.predictor },
        label: { show: 1 - a > 0.12, formatter: `predictor ${((1 - a) * 100).toFixed(0)}%`, color: '#fff' } },
    ],
  }), [a]);
  return (
    <div data-testid="split-gauge" data-alpha={a}>
      <Chart option={option} height={46} label={`Baseline ${Math.round(a * 100)} percent, predictor ${Math.round((1 - a) * 100)} percent`} />
      <p class="small muted">α = {typeof a === 'number' ? a.toFixed(2) : fmtNum(a)} — the baseline's weight in rank fusion; the predictor earns the rest by winning.</p>
    </div>
  );
}

function winner(c) {
  if (c.winner) return c.winner;
  if (c.margin === 0) return 'tie';
  return c.margin > 0 ? 'predictor' : 'baseline';
}

export function WinLossTimeline({ comparisons, resets = [], onPick }) {
  const ordered = useMemo(() => [...comparisons].sort((x, y) => (x.created_at < y.created_at ? -1 : 1)), [comparisons]);
  const option = useMemo(() => {
    const color = { predictor: COLORS.ok, baseline: COLORS.bad, tie: COLORS.muted };
    const dots = ordered.map((c, i) => {
      const col = color[winner(c)];
      const hollow = !c.ema_updated;
      return {
        value: [i + 1, c.margin ?? 0], id: c.id, c,
        symbolSize: 11,
        itemStyle: hollow ? { color: 'transparent', borderColor: col, borderWidth: 2 } : { color: col, borderColor: col },
      };
    });
    return {
      grid: { left: 46, right: 46, top: 24, bottom: 30 },
      legend: { data: ['margin (NDCG predictor − baseline)', 'success rate (EMA)'], top: 0, textStyle: { fontSize: 11 } },
      tooltip: {
        trigger: 'item',
        formatter: (p) => {
          const c = p.data.c;
          if (!c) return `success rate ${fmtNum(p.value[1])}`;
          return `session ${c.session_key}<br/>${winner(c)} won · margin ${fmtNum(c.margin, 3)}<br/>`
            + `predictor NDCG ${fmtNum(c.predictor_ndcg, 3)} · baseline ${fmtNum(c.baseline_ndcg, 3)}<br/>`
            + `confidence ${fmtNum(c.scorer_confidence)} ${c.ema_updated ? '' : '(excluded from EMA)'}<br/>${fmtTime(c.created_at)}`;
        },
      },
      xAxis: { type: 'value', name: 'session', nameLocation: 'middle', nameGap: 20, minInterval: 1, min: 0, max: ordered.length + 1 },
      yAxis: [
        { type: 'value', name: 'margin', min: -1, max: 1, splitLine: { lineStyle: { color: '#eee' } } },
        { type: 'value', name: 'EMA', min: 0, max: 1, position: 'right', splitLine: { show: false } },
      ],
      series: [
        { name: 'margin (NDCG predictor − baseline)', type: 'scatter', data: dots, itemStyle: { color: COLORS.muted },
          markLine: { silent: true, symbol: 'none', lineStyle: { color: '#ccc' }, data: [{ yAxis: 0 },
            ...resets.map((at) => ({ xAxis: ordered.filter((c) => c.created_at < at).length + 0.5,
              lineStyle: { color: COLORS.bad, type: 'dashed' }, label: { formatter: 'drift reset', color: COLORS.bad } }))] } },
        { name: 'success rate (EMA)', type: 'line', yAxisIndex: 1, showSymbol: false, smooth: false,
          data: ordered.map((c, i) => [i + 1, c.success_rate]), lineStyle: { color: COLORS.predictor, width: 2 },
          itemStyle: { color: COLORS.predictor } },
      ],
    };
  }, [ordered, resets]);
  const onClick = (p) => { if (p.data && p.data.id) onPick(p.data.id); };
  return (
    <div data-testid="win-loss">
      <Chart option={option} height={240} label="Win/loss timeline: one dot per session; hollow dots were excluded from the EMA" onClick={onClick} />
      <p class="small muted">
        <span class="legend-dot" style={{ background: COLORS.ok }} /> predictor won ·
        <span class="legend-dot" style={{ background: COLORS.bad }} /> baseline won ·
        <span class="legend-dot" style={{ background: COLORS.muted }} /> tie ·
        <span class="legend-dot hollow" /> low confidence, excluded · click a dot (or a row below) to inspect
      </p>
    </div>
  );
}

export function TrainingCurve({ runs }) {
  const option = useMemo(() => {
    const ordered = [...runs].sort((a, b) => (a.created_at < b.created_at ? -1 : 1));
    const points = [];
    const marks = [];
    let step = 0;
    let lastVersion = null;
    for (const r of ordered) {
      const curve = Array.isArray(r.loss_curve) && r.loss_curve.length ? r.loss_curve : [r.loss];
      if (r.trigger === 'drift_reset' || r.drift_reset) {
        marks.push({ xAxis: step, name: 'drift reset', lineStyle: { color: COLORS.bad, type: 'dashed' }, label: { formatter: 'drift reset', color: COLORS.bad } });
      }
      if ((r.swapped || r.swapped === undefined) && r.model_version !== lastVersion && r.model_version != null) {
        marks.push({ xAxis: step, name: `v${r.model_version}`, lineStyle: { color: COLORS.predictor, type: 'solid', opacity: 0.5 }, label: { formatter: `v${r.model_version}` } });
        lastVersion = r.model_version;
      }
      for (const v of curve) {
        const loss = typeof v === 'object' && v !== null ? v.loss : v;
        if (loss !== null && loss !== undefined && Number.isFinite(loss)) points.push([step, loss]);
        step += 1;
      }
    }
    return {
      grid: { left: 46, right: 16, top: 24, bottom: 30 },
      tooltip: { trigger: 'axis' },
      xAxis: { type: 'value', name: 'training step', nameLocation: 'middle', nameGap: 20 },
      yAxis: { type: 'value', name: 'loss', scale: true },
      series: [{ type: 'line', data: points, showSymbol: points.length < 40, lineStyle: { color: COLORS.info },
        itemStyle: { color: COLORS.info },
        markLine: { silent: true, symbol: 'none', data: marks } }],
    };
  }, [runs]);
  return <div data-testid="training-curve"><Chart option={option} height={220} label="Training loss over steps with model version and drift reset markers" /></div>;
}

export function Sparkline({ samples, timeoutMs, timedOut }) {
  const values = samples.map((s) => s.ms);
  const p95 = values.length ? [...values].sort((a, b) => a - b)[Math.floor(0.95 * (values.length - 1))] : 0;
  const color = timedOut ? COLORS.bad : (p95 > 0.8 * timeoutMs ? COLORS.warn : COLORS.ok);
  const option = useMemo(() => ({
    grid: { left: 2, right: 2, top: 2, bottom: 2 },
    xAxis: { type: 'category', show: false, data: values.map((_, i) => i) },
    yAxis: { type: 'value', show: false, min: 0 },
    tooltip: { trigger: 'axis', formatter: (p) => `${fmtNum(p[0].value, 1)} ms` },
    series: [{ type: 'line', data: values, showSymbol: false, lineStyle: { color, width: 1.5 }, areaStyle: { color, opacity: 0.15 } }],
  }), [samples, color]);
  return (
    <div class="sparkline" data-testid="latency-sparkline" data-state={timedOut ? 'timeout' : (p95 > 0.8 * timeoutMs ? 'warn' : 'ok')}>
      <Chart option={option} height={40} label={`Recent scoring latency, p95 ${fmtNum(p95, 1)} ms`} />
      <span class="small">{values.length ? `p95 ${fmtNum(p95, 1)} ms of ${timeoutMs} ms timeout` : 'no scoring samples yet'}</span>
    </div>
  );
}

// ECharts, tree-shaken to what the dashboard draws, wrapped as a Preact component.
import { useEffect, useRef } from 'preact/hooks';
import * as echarts from 'echarts/core';
import { BarChart, LineChart, ScatterChart, GraphChart } from 'echarts/charts';
import {
  GridComponent, TooltipComponent, LegendComponent, MarkLineComponent, TitleComponent,
} from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([BarChart, LineChart, ScatterChart, GraphChart, GridComponent, TooltipComponent,
  LegendComponent, MarkLineComponent, TitleComponent, CanvasRenderer]);

export function Chart({ option, height = 220, label, testid, onClick }) {
  const el = useRef(null);
  const chart = useRef(null);
  useEffect(() => {
    chart.current = echarts.init(el.current, null, { renderer: 'canvas' });
    const ro = new ResizeObserver(() => chart.current && chart.current.resize());
    ro.observe(el.current);
    return () => { ro.disconnect(); chart.current.dispose(); chart.current = null; };
  }, []);
  useEffect(() => {
    if (chart.current) chart.current.setOption({ animation: false, ...option }, true);
  }, [option]);
  useEffect(() => {
    if (!chart.current || !onClick) return undefined;
    chart.current.on('click', onClick);
    return () => chart.current && chart.current.off('click', onClick);
  }, [onClick]);
  return <div ref={el} class="chart" style={{ height: `${height}px` }} role="img" aria-label={label} data-testid={testid} />;
}

export const COLORS = {
  ok: '#2f9e44', bad: '#e03131', warn: '#f08c00', info: '#1c7ed6', muted: '#868e96',
  predictor: '#7048e8', baseline: '#1098ad',
};

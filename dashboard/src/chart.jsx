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
  const latest = useRef(option);
  const clickRef = useRef(onClick);
  latest.current = option;
  clickRef.current = onClick;
  useEffect(() => {
    // Init only once the container has a size: ECharts' view coordinate systems (graph
    // layout) fail on a 0×0 container, which happens mid tab switch.
    const ensure = () => {
      const node = el.current;
      if (!node || !node.clientWidth || !node.clientHeight) return;
      if (!chart.current) {
        chart.current = echarts.init(node, null, { renderer: 'canvas' });
        chart.current.on('click', (p) => clickRef.current && clickRef.current(p));
        chart.current.setOption({ animation: false, ...latest.current }, true);
      } else {
        chart.current.resize();
      }
    };
    const ro = new ResizeObserver(ensure);
    ro.observe(el.current);
    ensure();
    return () => { ro.disconnect(); if (chart.current) chart.current.dispose(); chart.current = null; };
  }, []);
  useEffect(() => {
    if (chart.current) chart.current.setOption({ animation: false, ...option }, true);
  }, [option]);
  return <div ref={el} class="chart" style={{ height: `${height}px` }} role="img" aria-label={label} data-testid={testid} />;
}

export const COLORS = {
  ok: '#2f9e44', bad: '#e03131', warn: '#f08c00', info: '#1c7ed6', muted: '#868e96',
  predictor: '#7048e8', baseline: '#1098ad',
};

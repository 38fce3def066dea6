// Graph: find an entity, see its one-hop neighbourhood (ECharts force graph), its
// aspects and the memories that mention it. Clicking a neighbour recentres the view.
import { useEffect, useMemo, useState, useCallback } from 'preact/hooks';
import { useApi, items, qs } from '../api.js';
import { Chart, COLORS } from '../chart.jsx';
import { Card, Pending, Empty, short } from '../ui.jsx';
import { CodeView } from './CodeView.jsx';

// Nodes/edges from whatever the graph API returns: {nodes, edges} or {entity, relations}.
export function toGraph(data, centerId) {
  if (!data) return { nodes: [], links: [] };
  const nodes = new Map();
  const links = [];
  const add = (id, name, type, center = false) => {
    if (!id) return;
    if (!nodes.has(id)) nodes.set(id, { id, name: name || id, etype: type || 'unknown', center });
  };
  const center = data.entity || data.center || (data.id && data.name ? data : null);
  if (center) add(center.id, center.name, center.entity_type, true);
  for (const n of items(data.nodes || [])) add(n.id, n.name || n.label, n.entity_type || n.type, n.id === centerId);
  for (const e of items(data.edges || data.relations || data.links || [])) {
    if (e.other_id && center) {  // /api/graph/entity/{id}: relations relative to the entity
      add(e.other_id, e.other_name, null);
      const out = e.direction !== 'in';
      links.push({ source: out ? center.id : e.other_id, target: out ? e.other_id : center.id,
        label: e.type || '', value: e.confidence ?? 1 });
      continue;
    }
    const s = e.source_entity_id || e.source || e.from;
    const t = e.target_entity_id || e.target || e.to;
    add(s, e.source_name, null, s === centerId);
    add(t, e.target_name, null, t === centerId);
    links.push({ source: s, target: t, label: e.relation_type || e.type || '', value: e.confidence ?? e.strength ?? 1 });
  }
  for (const n of items(data.neighbors || data.neighbours || [])) add(n.id, n.name, n.entity_type);
  return { nodes: [...nodes.values()], links };
}

export function GraphTab({ arg, navigate }) {
  const [q, setQ] = useState('');
  const [query, setQuery] = useState('');
  const list = useApi(`/api/graph/entities${qs({ q: query, limit: 40 })}`);
  const entities = items(list.data, 'entities', 'items');
  // a search moves the detail pane to what it found: the entity of that name, else the first match
  useEffect(() => {
    if (!query || list.loading || !list.ok || !entities.length) return;
    const exact = entities.find((e) => (e.name || '').toLowerCase() === query.trim().toLowerCase());
    const pick = (exact || entities[0]).id;
    if (pick !== arg) navigate('graph', pick);
  }, [query, list.data]);
  // with nothing picked, open on the most connected entity (a frequent word without relations is noise)
  const hub = useApi(arg ? null : '/api/graph/entities?sort=relations&limit=1');
  const selected = arg || items(hub.data, 'items')[0]?.id || (hub.loading ? null : entities[0]?.id);
  const detail = useApi(selected ? `/api/graph/entity/${encodeURIComponent(selected)}` : null);
  const source = detail.data;
  const graph = useMemo(() => toGraph(source, selected), [source, selected]);
  const option = useMemo(() => ({
    tooltip: { formatter: (p) => (p.dataType === 'edge' ? `${p.data.label} (${p.data.value})` : `${p.data.name} (${p.data.etype})`) },
    series: [{
      type: 'graph', layout: 'force', roam: true, draggable: true,
      force: { repulsion: 220, edgeLength: 90 },
      label: { show: true, position: 'right', fontSize: 11 },
      edgeLabel: { show: true, formatter: (p) => p.data.label, fontSize: 10, color: COLORS.muted },
      edgeSymbol: ['none', 'arrow'],
      data: graph.nodes.map((n) => ({ ...n, symbolSize: n.center ? 28 : 16,
        itemStyle: { color: n.center ? COLORS.predictor : COLORS.baseline } })),
      links: graph.links,
      lineStyle: { color: '#adb5bd', width: 1.5, curveness: 0.1 },
    }],
  }), [graph]);
  const onClick = useCallback((p) => { if (p.dataType === 'node' && p.data.id) navigate('graph', p.data.id); }, []);
  const d = detail.data || {};
  const memories = items(d.memories || []);
  const aspects = items(d.aspects || []);
  return (
    <div class="split with-detail graph">
      <div class="pane narrow">
        <form class="toolbar" role="search" onSubmit={(e) => { e.preventDefault(); setQuery(q); }}>
          <input type="search" data-search placeholder="Find entity" value={q} onInput={(e) => setQ(e.target.value)}
            aria-label="Find entity" data-testid="entity-search" />
          <button type="submit">Find</button>
        </form>
        <Pending res={list} what="the knowledge graph (/api/graph/entities)" />
        <ul class="list" data-testid="entity-list">
          {entities.map((e) => (
            <li><a class={`row-link ${selected === e.id ? 'active' : ''}`} href={`#/graph/${encodeURIComponent(e.id)}`}>
              <span class="tag">{e.entity_type}</span><span class="row-text">{e.name}</span>
              <span class="row-meta">{e.mentions} mentions</span></a></li>
          ))}
        </ul>
        {list.ok && !entities.length && <Empty>No entities yet; they appear as memories mention files, tools and names.</Empty>}
      </div>
      <div class="pane">
        <Card title={d.name ? `${d.name} (${d.entity_type})` : (selected || 'Neighbourhood')} testid="graph-view">
          {selected ? (graph.nodes.length
            ? <Chart option={option} height={420} label="Entity neighbourhood graph" onClick={onClick} testid="graph-chart" />
            : <Pending res={detail} what="neighbourhood" />) : <Empty>Pick an entity.</Empty>}
          {selected && graph.nodes.length > 0 && (
            <p class="muted small">{graph.nodes.length} entities, {graph.links.length} relations. Click a node to recentre; drag to rearrange.</p>
          )}
        </Card>
        {aspects.length > 0 && (
          <Card title="Aspects">
            <ul class="feed">{aspects.map((a) => (
              <li><span class="tag">{a.name}</span><span class="feed-msg">{(a.attributes || []).map((x) => short(x.content || x.value, 80)).join(' · ') || '—'}</span></li>
            ))}</ul>
          </Card>
        )}
        {memories.length > 0 && (
          <Card title="Memories mentioning it">
            <ul class="feed">{memories.map((m) => (
              <li><a href={`#/memories/${m.id}`}>{short(m.content, 140)}</a></li>
            ))}</ul>
          </Card>
        )}
        <CodeView />
      </div>
    </div>
  );
}

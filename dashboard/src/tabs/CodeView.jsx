// Code view (Graph tab): one indexed file or symbol — what depends on it (depth and chain),
// the tests that cover it, and the memories attached to it or to its code neighbourhood.
import { useState } from 'preact/hooks';
import { useApi, items, qs } from '../api.js';
import { Card, Pending, Empty, short } from '../ui.jsx';

export function CodeView() {
  const projects = useApi('/api/code/projects');
  const known = items(projects.data, 'projects');
  const [chosen, setChosen] = useState('');
  const [text, setText] = useState('');
  const [target, setTarget] = useState('');
  const project = chosen || known[0]?.project || '';
  const ready = Boolean(target && project);
  const impact = useApi(ready ? `/api/code/impact${qs({ target, project, depth: 2 })}` : null);
  const around = useApi(ready ? `/api/code/memories${qs({ files: target.split(':')[0], project, depth: 1 })}` : null);
  const d = impact.data || {};
  const deps = items(d.dependents || []);
  const tests = items(d.tests || []);
  const memories = items(around.data?.memories || []);
  if (projects.ok && !known.length) {
    return <Card title="Code" testid="code-view"><Empty>No code indexed yet: run <code>kenning code index PATH</code>.</Empty></Card>;
  }
  return (
    <Card title="Code" testid="code-view">
      <form class="toolbar" onSubmit={(e) => { e.preventDefault(); setTarget(text.trim()); }}>
        <select aria-label="Code project" value={project} onChange={(e) => setChosen(e.target.value)} data-testid="code-project">
          {known.map((p) => <option value={p.project}>{p.project} ({p.files} files)</option>)}
        </select>
        <input type="search" placeholder="path or path:symbol" value={text} onInput={(e) => setText(e.target.value)}
          aria-label="Code file or symbol" data-testid="code-target" />
        <button type="submit">Show</button>
      </form>
      <Pending res={projects} what="the code graph (/api/code/projects)" />
      {ready && <Pending res={impact} what="impact (/api/code/impact)" />}
      {ready && impact.ok && (
        <div data-testid="code-impact">
          <p class="muted small">{deps.length} dependents, {tests.length} tests within 2 hops of {d.target}.</p>
          <ul class="feed">{deps.slice(0, 50).map((x) => (
            <li><span class="tag">{x.depth} · {x.edge}</span><span class="feed-msg">{x.chain.join(' → ')}</span></li>
          ))}</ul>
          {tests.length > 0 && <ul class="feed" data-testid="code-tests">{tests.slice(0, 20).map((t) => (
            <li><span class="tag">test</span><span class="feed-msg">{t.symbol ? `${t.path}:${t.symbol}` : t.path}</span></li>
          ))}</ul>}
        </div>
      )}
      {ready && around.ok && (
        memories.length
          ? <ul class="feed" data-testid="code-memories">{memories.map((m) => (
            <li><span class="tag">{m.distance ? `${m.distance} hop` : 'here'}</span>
              <a href={`#/memories/${m.id}`}>{short(m.content, 140)}</a><span class="row-meta">{m.linked_to}</span></li>
          ))}</ul>
          : <Empty>No memories attached to this code or its neighbours.</Empty>
      )}
    </Card>
  );
}

// The kenning dashboard: one page, seven tabs, hash routing (#/tab/arg), keyboard first.
import { render } from 'preact';
import { useEffect, useState, useRef } from 'preact/hooks';
import { useApi, useAuthNeeded, savedToken, saveToken } from './api.js';
import { Badge } from './ui.jsx';
import { MemoriesTab } from './tabs/Memories.jsx';
import { SessionsTab } from './tabs/Sessions.jsx';
import { PipelineTab } from './tabs/Pipeline.jsx';
import { HealthTab } from './tabs/Health.jsx';
import { GraphTab } from './tabs/Graph.jsx';
import { PredictorTab } from './tabs/Predictor.jsx';
import { ReviewTab } from './tabs/Review.jsx';
import './style.css';

const TABS = [
  { id: 'memories', label: 'Memories', view: MemoriesTab },
  { id: 'sessions', label: 'Sessions', view: SessionsTab },
  { id: 'pipeline', label: 'Pipeline', view: PipelineTab },
  { id: 'health', label: 'Health', view: HealthTab },
  { id: 'graph', label: 'Graph', view: GraphTab },
  { id: 'predictor', label: 'Predictor', view: PredictorTab },
  { id: 'review', label: 'Review', view: ReviewTab },
];

function parseHash() {
  const parts = window.location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  const tab = TABS.some((t) => t.id === parts[0]) ? parts[0] : 'memories';
  return { tab, arg: parts.slice(1).join('/') || null };
}

export function navigate(tab, arg) {
  window.location.hash = `#/${tab}${arg ? `/${encodeURIComponent(arg)}` : ''}`;
}

function typing(ev) {
  const t = ev.target;
  return t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);
}

// Shown instead of the tabs when the daemon answers 401: asks for the token once and keeps it
// in this browser (localStorage), then reloads.
function TokenPrompt() {
  const [value, setValue] = useState('');
  const refused = Boolean(savedToken());
  const submit = (ev) => {
    ev.preventDefault();
    if (!value.trim()) return;
    saveToken(value.trim());
    window.location.reload();
  };
  return (
    <form class="card token-prompt" onSubmit={submit} data-testid="token-prompt">
      <h2>This daemon needs its access token</h2>
      <p>{refused
        ? 'The token saved in this browser was refused. Paste the current one.'
        : 'kenning is configured with auth_token (config.yaml or KENNING_TOKEN). Paste it once; this browser remembers it.'}</p>
      <label>Token <input type="password" autocomplete="current-password" value={value}
        onInput={(e) => setValue(e.target.value)} data-testid="token-input" autofocus /></label>
      <div class="row-buttons">
        <button type="submit">Save and reload</button>
        {refused && <button type="button" class="ghost" onClick={() => { saveToken(null); window.location.reload(); }}>Forget saved token</button>}
      </div>
    </form>
  );
}

function App() {
  const [route, setRoute] = useState(parseHash());
  const authNeeded = useAuthNeeded();
  const tabRefs = useRef({});
  const health = useApi('/api/diagnostics', 15000);

  useEffect(() => {
    const onHash = () => setRoute(parseHash());
    window.addEventListener('hashchange', onHash);
    const onKey = (ev) => {
      if (typing(ev) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const n = Number(ev.key);
      if (n >= 1 && n <= TABS.length) { navigate(TABS[n - 1].id); ev.preventDefault(); }
      if (ev.key === '/') {
        const search = document.querySelector('[data-search]');
        if (search) { search.focus(); ev.preventDefault(); }
      }
      if (ev.key === '?') document.getElementById('keys-help')?.toggleAttribute('open');
    };
    window.addEventListener('keydown', onKey);
    return () => { window.removeEventListener('hashchange', onHash); window.removeEventListener('keydown', onKey); };
  }, []);

  const onTabKey = (ev) => {
    const i = TABS.findIndex((t) => t.id === route.tab);
    let j = null;
    if (ev.key === 'ArrowRight') j = (i + 1) % TABS.length;
    if (ev.key === 'ArrowLeft') j = (i - 1 + TABS.length) % TABS.length;
    if (ev.key === 'Home') j = 0;
    if (ev.key === 'End') j = TABS.length - 1;
    if (j !== null) {
      ev.preventDefault();
      navigate(TABS[j].id);
      tabRefs.current[TABS[j].id]?.focus();
    }
  };

  const current = TABS.find((t) => t.id === route.tab);
  const View = current.view;
  const composite = health.ok ? health.data.composite : null;
  return (
    <div class="app">
      <header class="topbar">
        <h1><a href="#/memories">kenning</a></h1>
        <nav role="tablist" aria-label="Dashboard sections" onKeyDown={onTabKey}>
          {TABS.map((t, i) => (
            <a role="tab" id={`tab-${t.id}`} href={`#/${t.id}`} aria-selected={t.id === route.tab}
              aria-controls="panel" tabIndex={t.id === route.tab ? 0 : -1}
              ref={(el) => { tabRefs.current[t.id] = el; }} title={`${t.label} (${i + 1})`}>
              {t.label}
            </a>
          ))}
        </nav>
        <a class="health-pill" href="#/health" data-testid="composite-health" title="Composite health">
          {composite
            ? <Badge status={composite.status} label={`health ${Math.round(composite.score * 100)}`} />
            : <Badge status="disabled" label={health.loading ? 'health …' : 'health ?'} />}
        </a>
        <details id="keys-help" class="keys-help">
          <summary aria-label="Keyboard shortcuts">?</summary>
          <ul>
            <li><kbd>1</kbd>–<kbd>6</kbd> switch tab</li>
            <li><kbd>←</kbd> <kbd>→</kbd> move between tabs</li>
            <li><kbd>/</kbd> focus search</li>
            <li><kbd>Esc</kbd> close a detail pane</li>
          </ul>
        </details>
      </header>
      <main id="panel" role="tabpanel" aria-labelledby={`tab-${route.tab}`} data-tab={route.tab}>
        {authNeeded ? <TokenPrompt /> : <View arg={route.arg} navigate={navigate} />}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app'));

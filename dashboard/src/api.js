// Small fetch layer: every call resolves to {ok, status, data, error}; nothing throws, so a
// missing endpoint (another capability not shipped yet) renders as a notice, not a crash.
import { useEffect, useState, useCallback, useRef } from 'preact/hooks';

// A 401 means the daemon has a token and we lack it (or have a wrong one): the app asks for it
// once (see TokenPrompt in main.jsx) instead of every tab failing on its own.
const TOKEN_KEY = 'kenning.token';
const authListeners = new Set();
let authNeeded = false;

export function savedToken() { return localStorage.getItem(TOKEN_KEY); }
export function saveToken(token) {
  if (token) localStorage.setItem(TOKEN_KEY, token); else localStorage.removeItem(TOKEN_KEY);
}

export function useAuthNeeded() {
  const [needed, setNeeded] = useState(authNeeded);
  useEffect(() => { authListeners.add(setNeeded); return () => authListeners.delete(setNeeded); }, []);
  return needed;
}

export async function api(path, { method = 'GET', body, signal } = {}) {
  const headers = { accept: 'application/json' };
  const token = savedToken();
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    const res = await fetch(path, {
      method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body),
    });
    let data = null;
    const text = await res.text();
    try { data = text ? JSON.parse(text) : null; } catch { data = text; }
    if (res.status === 401 && !authNeeded) {
      authNeeded = true;
      authListeners.forEach((fn) => fn(true));
    }
    if (!res.ok) {
      const detail = data && (data.error || data.detail);
      const error = typeof detail === 'string' ? detail : (detail ? JSON.stringify(detail) : `HTTP ${res.status}`);
      return { ok: false, status: res.status, data, error };
    }
    return { ok: true, status: res.status, data, error: null };
  } catch (err) {
    if (err.name === 'AbortError') return { ok: false, status: 0, data: null, error: 'aborted' };
    return { ok: false, status: 0, data: null, error: `daemon unreachable: ${err.message}` };
  }
}

// GET `path` now and every `intervalMs` (0 = once); re-fetch when `path` changes.
export function useApi(path, intervalMs = 0) {
  const [state, setState] = useState({ loading: true, ok: false, status: 0, data: null, error: null });
  const tick = useRef(0);
  const load = useCallback(async () => {
    if (!path) { setState({ loading: false, ok: false, status: 0, data: null, error: null }); return; }
    const mine = ++tick.current;
    const res = await api(path);
    if (mine === tick.current) setState({ loading: false, ...res });
  }, [path]);
  useEffect(() => {
    setState((s) => ({ ...s, loading: true }));
    load();
    if (!intervalMs) return undefined;
    const id = setInterval(load, intervalMs);
    return () => clearInterval(id);
  }, [load, intervalMs]);
  return { ...state, reload: load };
}

// Lists come back as arrays or as {items|results|sessions|comparisons|...: []}.
export function items(data, ...keys) {
  if (!data) return [];
  if (Array.isArray(data)) return data;
  for (const k of [...keys, 'items', 'results', 'data']) if (Array.isArray(data[k])) return data[k];
  return [];
}

export function qs(params) {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== '' && v !== false)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

// Small pieces every page uses: loading a resource, times in the viewer's zone, long values
// folded, errors said plainly.

import { html, useCallback, useEffect, useState } from './vendor/htm-preact-standalone.mjs';

/** Load with `load()` when `deps` change: {data, error, loading, reload}. */
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((old) => ({ ...old, loading: true }));
    Promise.resolve().then(load)
      .then((data) => live && setState({ data, error: null, loading: false }))
      .catch((error) => live && setState({ data: null, error, loading: false }));
    return () => { live = false; };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { ...state, reload };
}

/** A time (epoch seconds, milliseconds or an ISO text) as a Date, or null. */
export function dateOf(value) {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'number') return new Date(value < 1e11 ? value * 1000 : value);
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** A time shown in the viewer's zone, its ISO form as the machine-readable value. */
export function Time({ value }) {
  const date = dateOf(value);
  if (!date) return html`<span class="muted">—</span>`;
  return html`<time datetime=${date.toISOString()} title=${date.toISOString()}>${date.toLocaleString()}</time>`;
}

/** A value shown whole when short, folded (a summary to open) when long. */
export function Fold({ value, limit = 240, label = 'value' }) {
  if (value === undefined) return null;
  const compact = typeof value === 'string' ? value : JSON.stringify(value);
  if (compact.length <= limit) {
    return compact.includes('\n') ? html`<pre class="value">${compact}</pre>` : html`<code class="value">${compact}</code>`;
  }
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return html`
    <details class="fold">
      <summary aria-label=${`${label}: ${text.length} characters, folded`}>${text.slice(0, 80).replace(/\s+/g, ' ')}… <span class="muted">(${text.length} chars)</span></summary>
      <pre>${text}</pre>
    </details>`;
}

/** An error from the API: its message, code and hint. */
export function ErrorLine({ error }) {
  if (!error) return null;
  return html`<p class="error" role="alert">${error.message || String(error)}${error.code ? html` <code>${error.code}</code>` : null}${error.hint ? html`<br /><span class="hint">${error.hint}</span>` : null}</p>`;
}

/** Loading, failed, or the content. */
export function Loaded({ state, children }) {
  if (state.error) return html`<${ErrorLine} error=${state.error} />`;
  if (state.loading && !state.data) return html`<p role="status" class="loading">Loading…</p>`;
  return children(state.data);
}

/** A status as a badge. */
export function Status({ value }) {
  return html`<span class=${`badge status-${value || 'unknown'}`}>${value || 'unknown'}</span>`;
}

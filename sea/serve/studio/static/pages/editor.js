// The editor (`#/playbooks/<name>`, `#/edit/<name>`): the playbook's JSON with line numbers
// beside its graph. Every change is checked by the server (debounced); its diagnostics are
// listed, marked at their line and on their node. A variable overlay shows where a
// variable is defined and read. Save writes the file (the server's own playbooks only, never
// over a change on disk); a change on disk reloads the text, or says so when there are
// unsaved edits.

import { html, useEffect, useMemo, useRef, useState } from '../vendor/htm-preact-standalone.mjs';
import { GraphView } from '../graphview.js';
import { href } from '../route.js';
import {
  diagnosticBadges, diagnosticMarks, graphFor, lineCount, lineMarks, mergeMarks, offsetOf, overlayMarks,
} from '../editing.js';
import { ErrorLine } from '../ui.js';
import { Diagnostics } from './playbooks.js';

const DEBOUNCE_MS = 300;
const POLL_MS = 2000;

function Gutter({ count, marks, gutterRef }) {
  const lines = [];
  for (let n = 1; n <= count; n += 1) {
    const mark = marks[n];
    lines.push(html`<div key=${n} data-line=${n} class=${mark ? `ln diag-${mark}` : 'ln'}
      title=${mark ? `${mark} on line ${n}` : null}>${mark ? html`<span class="mark">${mark === 'error' ? '✖' : '▲'}</span>` : null}${n}</div>`);
  }
  return html`<div class="gutter" aria-hidden="true" ref=${gutterRef}>${lines}</div>`;
}

function nodeLine(text, id) {
  const found = new RegExp(`"id"\\s*:\\s*${JSON.stringify(id).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`).exec(text);
  if (!found) return null;
  return text.slice(0, found.index).split('\n').length;
}

export default function Editor({ api, name, setTitle }) {
  const [loaded, setLoaded] = useState(null); // {text, sha256, writable, source}
  const [loadError, setLoadError] = useState(null);
  const [text, setText] = useState('');
  const [check, setCheck] = useState(null);
  const [model, setModel] = useState(null);
  const [selected, setSelected] = useState(null);
  const [variable, setVariable] = useState('');
  const [banner, setBanner] = useState(null);
  const [saveState, setSaveState] = useState({ busy: false, error: null, note: '' });
  const area = useRef(null);
  const gutter = useRef(null);
  const current = useRef({});
  current.current = { loaded, text };
  const dirty = loaded !== null && text !== loaded.text;

  const load = async () => {
    try {
      const shown = await api.get(`/v1/playbooks/${encodeURIComponent(name)}`);
      const text0 = shown.text ?? '';
      setLoaded({ text: text0, sha256: shown.sha256, writable: shown.writable, source: shown.source });
      setText(text0); setBanner(null); setLoadError(null);
    } catch (error) { setLoadError(error); }
  };
  useEffect(() => { setTitle(`Edit ${name}`); load(); }, [name]);

  // Check every change, debounced; a stale answer is dropped.
  const asked = useRef(0);
  useEffect(() => {
    if (loaded === null) return undefined;
    const ticket = ++asked.current;
    const timer = setTimeout(async () => {
      try {
        const answer = await api.post('/v1/validate', { text, name: `${name}.json` });
        if (ticket !== asked.current) return;
        setCheck(answer);
        setModel((last) => graphFor(text, answer.graph, last));
      } catch (error) {
        if (ticket === asked.current) setCheck({ failed: error, diagnostics: [], variables: [] });
      }
    }, DEBOUNCE_MS);
    setModel((last) => graphFor(text, null, last));
    return () => clearTimeout(timer);
  }, [text, loaded === null]);

  // A change on disk: reload when nothing is unsaved, else say so.
  useEffect(() => {
    const timer = setInterval(async () => {
      const { loaded: was, text: now } = current.current;
      if (!was || !was.sha256) return;
      try {
        const response = await api.raw(`/v1/playbooks/${encodeURIComponent(name)}`,
          { headers: { accept: 'application/json', 'if-none-match': `"${was.sha256}"` } });
        if (response.status !== 200) return;
        const shown = await response.json();
        if (shown.sha256 === was.sha256) return;
        if (now === was.text) {
          setLoaded({ text: shown.text ?? '', sha256: shown.sha256, writable: shown.writable, source: shown.source });
          setText(shown.text ?? '');
          setBanner({ kind: 'info', text: 'The file changed on disk: reloaded.' });
        } else {
          setBanner({ kind: 'conflict', text: 'The file changed on disk. Your edits are not saved.' });
        }
      } catch { /* the next poll tries again */ }
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [name]);

  const diagnostics = check?.diagnostics || [];
  const marks = useMemo(() => mergeMarks(diagnosticMarks(diagnostics),
    variable ? overlayMarks(check?.variables, variable) : {}), [check, variable]);
  const lines = useMemo(() => lineMarks(diagnostics), [check]);
  const badges = useMemo(() => diagnosticBadges(diagnostics), [check]);

  const caretTo = (line, column = 1) => {
    const element = area.current;
    if (!element) return;
    const offset = offsetOf(element.value, line, column);
    element.focus();
    element.setSelectionRange(offset, offset);
    const height = parseFloat(getComputedStyle(element).lineHeight) || 18;
    element.scrollTop = Math.max(0, (line - 4) * height);
    if (gutter.current) gutter.current.scrollTop = element.scrollTop;
  };
  const pick = (diagnostic) => {
    if (diagnostic.node_id) setSelected(diagnostic.node_id);
    if (diagnostic.line) caretTo(diagnostic.line, diagnostic.column || 1);
  };
  const selectNode = (id) => {
    setSelected(id);
    const line = nodeLine(text, id);
    if (line) caretTo(line);
  };

  const save = async () => {
    setSaveState({ busy: true, error: null, note: '' });
    try {
      const saved = await api.put(`/v1/playbooks/${encodeURIComponent(name)}`, { text },
        { 'if-match': `"${loaded.sha256}"` });
      setLoaded({ ...loaded, text, sha256: saved.sha256 });
      setBanner(null);
      setSaveState({ busy: false, error: null, note: 'Saved.' });
    } catch (error) {
      setSaveState({ busy: false, error, note: '' });
      if (error.code === 'SEA830') setBanner({ kind: 'conflict', text: 'The file changed on disk since it was loaded: not saved.' });
    }
  };

  if (loadError) return html`<h1>Edit ${name}</h1><${ErrorLine} error=${loadError} /><p><a href=${href('playbooks')}>All playbooks</a></p>`;
  if (!loaded) return html`<h1>Edit ${name}</h1><p role="status" class="loading">Loading…</p>`;
  const count = lineCount(text);
  const variables = check?.variables || [];
  const chosen = variables.find((item) => item.name === variable);
  return html`
    <h1>Edit ${name} ${dirty ? html`<span class="badge unsaved">unsaved</span>` : null}</h1>
    <p class="toolbar">
      <a href=${href('playbooks', { show: name })}>All playbooks</a>
      <span class=${`badge source-${loaded.source}`}>${loaded.source === 'bundled' ? 'bundled (read only)' : 'server directory'}</span>
      <button type="button" onClick=${save} disabled=${!loaded.writable || !dirty || saveState.busy}
        title=${loaded.writable ? '' : 'bundled playbooks are not written: copy it into a --playbooks directory'}>Save</button>
      ${saveState.note ? html`<span role="status" class="ok">${saveState.note}</span>` : null}
    </p>
    ${banner ? html`<div class=${`banner ${banner.kind}`} role=${banner.kind === 'conflict' ? 'alert' : 'status'}>
      ${banner.text}
      ${banner.kind === 'conflict' ? html` <button type="button" class="secondary" onClick=${load}>Reload from disk (drop my edits)</button>` : null}
      <button type="button" class="link" onClick=${() => setBanner(null)}>Dismiss</button></div>` : null}
    <${ErrorLine} error=${saveState.error} />
    <div class="editor">
      <section class="code-pane" aria-label="Playbook text">
        <div class="code-box">
          <${Gutter} count=${count} marks=${lines} gutterRef=${gutter} />
          <textarea ref=${area} class="code" spellcheck="false" wrap="off" aria-label=${`JSON of ${name}`}
            aria-describedby="check-status" value=${text}
            onInput=${(event) => setText(event.target.value)}
            onScroll=${(event) => { if (gutter.current) gutter.current.scrollTop = event.target.scrollTop; }}></textarea>
        </div>
        <p id="check-status" role="status" class="check-status">
          ${check === null ? 'Checking…' : check.failed ? `The check failed: ${check.failed.message}`
            : check.ok ? `Valid${check.warnings ? `, ${check.warnings} warning(s)` : ''}.` : `${check.errors} error(s), ${check.warnings} warning(s).`}
        </p>
        <${Diagnostics} items=${diagnostics} onPick=${pick} />
      </section>
      <section class="graph-pane" aria-label="Graph">
        <div class="overlay">
          <label>Variable <select value=${variable} onChange=${(event) => setVariable(event.target.value)}>
            <option value="">(none)</option>
            ${variables.map((item) => html`<option key=${item.name} value=${item.name}>${item.name}${item.defined ? '' : ' (undefined)'}</option>`)}
          </select></label>
          ${chosen ? html`<p class="legend" role="status">
            <span class="key defines">defined by</span> ${chosen.defined_by.join(', ') || (chosen.builtin ? 'the run' : 'nothing')};
            <span class=${`key ${chosen.defined ? 'reads' : 'reads-undefined'}`}>read by</span> ${chosen.read_by.join(', ') || 'nothing'}
            ${chosen.defined ? null : html` — <strong class="error">nothing defines it</strong>`}</p>` : null}
        </div>
        <${GraphView} model=${model} marks=${marks} badges=${badges} selected=${selected} onSelect=${selectNode} label=${`Graph of ${name}`} />
      </section>
    </div>`;
}

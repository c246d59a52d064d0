// Pulses: `#/pulses` — every pulse with its status, and a trace file opened in the page;
// `#/pulses/<id>` — one pulse as a timeline (nodes as spans by depth, model calls with their
// prompt parts, tokens, cost and time, tool calls with arguments and results, memory
// writes, `ref:` resolutions, plan events), live while it runs; its trace downloaded.
// Long timelines are drawn in chunks, a frame at a time, so the page never freezes.

import { Component, html, useEffect, useMemo, useRef, useState } from '../vendor/htm-preact-standalone.mjs';
import { dataOf, follow } from '../sse.js';
import { href } from '../route.js';
import { ErrorLine, Fold, Loaded, Status, Time, useLoad } from '../ui.js';
import { CHUNK, chunkKey, eventsOfTrace, layout, nextChunk } from '../timeline.js';

const LINK = { open: 'following live', closed: 'every event read', connecting: 'connecting', reconnecting: 'reconnecting', failed: 'failed' };
const seconds = (value) => `${(value || 0).toFixed(3)} s`;

function Parts({ parts }) {
  if (!parts || !parts.length) return null;
  return html`<table class="compact parts"><caption>Prompt parts</caption>
    <thead><tr><th scope="col">Part</th><th scope="col">Tokens</th><th scope="col">Detail</th></tr></thead>
    <tbody>${parts.map((part) => html`<tr><td>${part.part}</td><td>${part.tokens}</td><td>${part.detail ? html`<${Fold} value=${part.detail} label=${part.part} />` : ''}</td></tr>`)}</tbody></table>`;
}

function Detail({ span }) {
  if (!span) return html`<aside class="card detail" aria-label="Details"><p class="muted">Pick a row to see its details.</p></aside>`;
  const event = span.event;
  let body;
  if (span.kind === 'llm') {
    const record = event.record || {};
    body = html`<dl class="facts">
        <dt>Model</dt><dd>${record.model}${record.model_kind ? ` (${record.model_kind})` : ''}${record.fallback ? `, fallback ${record.fallback}` : ''}</dd>
        <dt>Tokens</dt><dd>${record.tokens_in} in, ${record.tokens_out} out</dd>
        <dt>Cost</dt><dd>${record.cost ?? 0}</dd>
        <dt>Time</dt><dd>${seconds(record.latency_s)}</dd>
        <dt>Outcome</dt><dd>${record.outcome}${record.retries ? `, ${record.retries} retries` : ''}${record.error ? ` — ${record.error}` : ''}</dd>
        ${record.pattern ? html`<dt>Pattern</dt><dd>${record.pattern}${record.stage ? ` (${record.stage})` : ''}</dd>` : null}
      </dl>
      <${Parts} parts=${record.context} />
      <h3>Messages</h3>
      <ol class="compact-list">${(record.messages || []).map((message) => html`<li><strong>${message.role}</strong> <${Fold} value=${message.content} label=${`${message.role} message`} /></li>`)}</ol>
      <h3>Answer</h3><${Fold} value=${record.response} label="answer" />`;
  } else if (span.kind === 'tool') {
    body = html`<dl class="facts">
      <dt>Tool</dt><dd><code>${event.tool}</code>${event.action_id ? ` (action ${event.action_id})` : ''}</dd>
      <dt>Arguments</dt><dd><${Fold} value=${event.args} label="arguments" /></dd>
      <dt>${event.ok === false ? 'Error' : 'Result'}</dt><dd><${Fold} value=${event.ok === false ? event.error : event.result} label="result" /></dd>
      <dt>Time</dt><dd>${seconds(event.duration_s)}</dd></dl>`;
  } else if (span.kind === 'node') {
    body = html`<dl class="facts">
      <dt>Type</dt><dd>${span.type}</dd><dt>Depth</dt><dd>${event.depth}</dd>
      <dt>Time</dt><dd>${span.duration !== undefined ? seconds(span.duration) : span.open ? 'not ended' : '—'}</dd>
      <dt>Outcome</dt><dd>${span.outcome || (span.open ? 'running or waiting' : '—')}</dd></dl>`;
  } else {
    body = html`<${Fold} value=${event} limit=${0} label=${span.kind} />`;
  }
  return html`<aside class="card detail" aria-label="Details"><h2>${span.label}</h2>${body}</aside>`;
}

function Bar({ span, total }) {
  const scale = total > 0 ? 1000 / total : 0;
  const x = Math.min(1000, span.start * scale);
  if (span.mark) {
    return html`<svg viewBox="0 0 1000 16" preserveAspectRatio="none" aria-hidden="true" focusable="false">
      <rect class=${`mark ${span.kind}`} x=${Math.max(0, x - 3)} y="2" width="6" height="12" /></svg>`;
  }
  const width = Math.max(2, (span.end - span.start) * scale);
  const kind = `bar ${span.kind} ${span.open ? 'open' : ''} ${span.outcome === 'error' || span.outcome === 'failed' ? 'failed' : ''}`;
  return html`<svg viewBox="0 0 1000 16" preserveAspectRatio="none" aria-hidden="true" focusable="false">
    <rect class=${kind} x=${x} y="3" width=${width} height="10" /></svg>`;
}

function describe(span) {
  if (span.mark) return `${span.label}, at ${seconds(span.start)}`;
  return `${span.label}, ${seconds(span.end - span.start)} from ${seconds(span.start)}${span.open ? ', not ended' : ''}${span.outcome && span.outcome !== 'ok' ? `, ${span.outcome}` : ''}`;
}

/** Rows of the timeline, redrawn only when one of them (or the scale) changed. */
class Rows extends Component {
  shouldComponentUpdate(next) {
    return next.signature !== this.props.signature || next.picked !== this.props.picked;
  }

  render({ spans, total, picked, onPick }) {
    return spans.map((item) => html`
      <li key=${item.id} class=${`lvl-${item.level > 4 ? 'deep' : item.level}${picked === item.id ? ' selected' : ''}`} data-kind=${item.kind}>
        <button type="button" class="row" aria-label=${describe(item)} aria-pressed=${picked === item.id ? 'true' : 'false'} onClick=${() => onPick(item.id)}>
          <span class="label">${item.label}</span><${Bar} span=${item} total=${total} /></button></li>`);
  }
}

/** The timeline of a list of events, drawn a chunk per frame. */
export function Timeline({ events, title = 'Timeline' }) {
  const laid = useMemo(() => layout(events), [events]);
  const [shown, setShown] = useState(0);
  const [picked, setPicked] = useState(null);
  useEffect(() => {
    if (shown >= laid.spans.length) return undefined;
    const frame = requestAnimationFrame(() => setShown((old) => nextChunk(old, laid.spans.length, CHUNK)));
    return () => cancelAnimationFrame(frame);
  }, [shown, laid.spans.length]);
  const { totals } = laid;
  const span = picked === null ? null : laid.spans[picked];
  const chunks = [];
  for (let at = 0; at < shown; at += CHUNK) chunks.push(laid.spans.slice(at, Math.min(shown, at + CHUNK)));
  return html`
    <p class="totals" aria-label="Totals">
      <span><strong>${totals.nodes}</strong> nodes</span><span><strong>${totals.llm}</strong> model calls</span>
      <span><strong>${totals.tools}</strong> tool calls</span>
      <span><strong>${totals.tokens_in}</strong> tokens in, <strong>${totals.tokens_out}</strong> out</span>
      <span>cost <strong>${totals.cost}</strong></span><span>time <strong>${seconds(laid.total)}</strong></span>
      ${laid.status ? html`<span>ended <${Status} value=${laid.status} /></span>` : null}</p>
    ${shown < laid.spans.length ? html`<p role="status" class="loading">Drawing ${shown} of ${laid.spans.length} rows…</p>` : null}
    <div class="timeline-wrap">
      <ol class="timeline" aria-label=${title}>${chunks.map((rows) => html`
        <${Rows} key=${rows[0].id} spans=${rows} total=${laid.total} signature=${chunkKey(rows, laid.total)}
          picked=${rows.some((item) => item.id === picked) ? picked : null} onPick=${setPicked} />`)}
      </ol>
      <${Detail} span=${span} />
    </div>`;
}

function download(name, blob) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url; link.download = name;
  document.body.appendChild(link); link.click(); link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function Pulse({ api, id }) {
  const pulse = useLoad(() => api.get(`/v1/pulses/${encodeURIComponent(id)}`), [id]);
  const [events, setEvents] = useState([]);
  const [link, setLink] = useState('connecting');
  const [error, setError] = useState(null);
  const [note, setNote] = useState('');
  const pending = useRef([]);
  useEffect(() => {
    const stop = new AbortController();
    pending.current = [];
    setEvents([]);
    const flush = setInterval(() => {
      if (pending.current.length) { const more = pending.current; pending.current = []; setEvents((old) => old.concat(more)); }
    }, 150);
    follow(api, `/v1/pulses/${encodeURIComponent(id)}/events`, {
      signal: stop.signal, onState: setLink,
      onEvent: (message) => { const data = dataOf(message); if (data && typeof data === 'object') pending.current.push({ kind: message.event, ...data }); },
    }).then(() => pulse.reload()).catch((failure) => { if (!stop.signal.aborted) setError(failure); });
    return () => { stop.abort(); clearInterval(flush); };
  }, [id]);
  const save = async () => {
    setNote('');
    const response = await api.raw(`/v1/pulses/${encodeURIComponent(id)}/trace`);
    if (response.ok) {
      download(`pulse-${id}.trace.json`, await response.blob());
      setNote('Downloaded the trace.');
    } else {
      const all = events.concat(pending.current);
      download(`pulse-${id}.events.json`, new Blob([JSON.stringify({ pulse_id: id, events: all }, null, 1)], { type: 'application/json' }));
      setNote('The server keeps no trace of this pulse any more: downloaded the events shown here instead.');
    }
  };
  const onlyHost = events.every((event) => ['metadata', 'end', 'values'].includes(event.kind));
  return html`
    <p><a href="#/pulses">All pulses</a></p>
    <${Loaded} state=${pulse}>${(data) => html`
      <h1>Pulse <code>${id.slice(0, 8)}</code> <${Status} value=${data.pulse_status || data.status} /></h1>
      <dl class="facts">
        <dt>Persona</dt><dd>${data.persona}</dd><dt>Playbook</dt><dd>${data.playbook}</dd>
        <dt>Started</dt><dd><${Time} value=${data.created_at} /></dd><dt>Runs</dt><dd>${data.runs.length}${data.runs.length > 1 ? ' (the timeline shows the latest)' : ''}</dd>
        ${data.decisions.map((decision) => html`<dt>Answered</dt><dd>${decision.answer?.approved === false ? 'denied' : 'approved'} by ${decision.answer?.approver} <${Time} value=${decision.at} /></dd>`)}
        ${data.error ? html`<dt>Error</dt><dd><${Fold} value=${data.error} label="error" /></dd>` : null}
      </dl>`}<//>
    <div class="toolbar">
      <button type="button" onClick=${save}>Download trace</button>
      <span class=${`live live-${link}`} role="status">${LINK[link] || link}</span>
      ${note ? html`<span role="status">${note}</span>` : null}
    </div>
    <${ErrorLine} error=${error} />
    ${onlyHost && link === 'closed' ? html`<p class="empty">The server keeps no events of this pulse any more.</p>` : html`<${Timeline} events=${events} title="Timeline of the pulse" />`}`;
}

function OpenTrace({ onOpen }) {
  const [error, setError] = useState(null);
  const pick = async (event) => {
    const file = event.target.files[0];
    if (!file) return;
    try {
      const parsed = JSON.parse(await file.text());
      setError(null);
      onOpen({ name: file.name, events: eventsOfTrace(parsed), trace: parsed });
    } catch (failure) { setError({ message: `${file.name}: ${failure.message}` }); }
  };
  return html`<div class="card"><label>Open a trace file <input type="file" accept=".json,application/json" onChange=${pick} /></label>
    <p class="help">A trace downloaded here, or written by <code>sea run --record FILE</code>: read in this page, sent nowhere.</p>
    <${ErrorLine} error=${error} /></div>`;
}

function List({ api, route }) {
  const persona = route.query.persona || '';
  const pulses = useLoad(() => api.get(`/v1/pulses?limit=200${persona ? `&persona=${encodeURIComponent(persona)}` : ''}`), [persona]);
  const [opened, setOpened] = useState(null);
  if (opened) {
    return html`<h1>Trace file ${opened.name}</h1>
      <p><button type="button" class="secondary" onClick=${() => setOpened(null)}>Close the file</button>
        ${opened.trace.pulse_id ? html` Pulse <code>${opened.trace.pulse_id}</code>` : null}
        ${opened.trace.playbook ? html` · playbook ${opened.trace.playbook}` : null}
        ${opened.trace.recorded_at ? html` · recorded <${Time} value=${opened.trace.recorded_at} />` : null}</p>
      <${Timeline} events=${opened.events} title="Timeline of the trace file" />`;
  }
  return html`
    <h1>Pulses${persona ? ` of ${persona}` : ''}</h1>
    <${OpenTrace} onOpen=${setOpened} />
    <${Loaded} state=${pulses}>${(data) => data.items.length ? html`
      <table class="pulses"><caption>Newest first</caption>
        <thead><tr><th scope="col">Pulse</th><th scope="col">Persona</th><th scope="col">Playbook</th><th scope="col">Status</th><th scope="col">Started</th></tr></thead>
        <tbody>${data.items.map((pulse) => html`<tr data-pulse=${pulse.id}>
          <td><a href=${href('pulses', pulse.id)}>${pulse.id.slice(0, 8)}</a></td><td>${pulse.persona}</td><td>${pulse.playbook}</td>
          <td><${Status} value=${pulse.pulse_status || pulse.status} /></td><td><${Time} value=${pulse.created_at} /></td></tr>`)}
        </tbody></table>` : html`<p class="empty">No pulse yet.</p>`}<//>`;
}

export default function Pulses({ api, route, setTitle }) {
  const id = route.parts[0];
  setTitle(id ? `Pulse ${id.slice(0, 8)}` : 'Pulses');
  return id ? html`<${Pulse} key=${id} api=${api} id=${id} />` : html`<${List} api=${api} route=${route} />`;
}

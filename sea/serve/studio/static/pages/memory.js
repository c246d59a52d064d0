// Memory: `#/memory/<persona>` — the persona's threads, its recent messages (role, tags, a
// stored `<system>` memo shown as one), a full-text search, and its pins (pin, unpin).

import { html, useState } from '../vendor/htm-preact-standalone.mjs';
import { href } from '../route.js';
import { ErrorLine, Fold, Loaded, Time, useLoad } from '../ui.js';

function Message({ message, snippet }) {
  const memo = message.role === 'system';
  const tags = (message.tags || []).filter((tag) => !tag.startsWith('pulse:'));
  return html`
    <li class=${`message role-${message.role}`} data-message=${message.id}>
      <div class="meta">
        <strong>${memo ? html`<span class="memo-badge">system memo</span>` : message.role}</strong>
        <span>#${message.id}</span>
        <${Time} value=${message.created_at} />
        ${message.thread ? html`<span>thread ${message.thread}</span>` : null}
        ${message.pulse_id ? html`<a href=${href('pulses', message.pulse_id)}>pulse ${message.pulse_id.slice(0, 8)}</a>` : null}
      </div>
      ${snippet !== undefined ? html`<p class="content snippet">${snippet}</p>` : html`<div class="content"><${Fold} value=${message.content} limit=${600} label="message" /></div>`}
      ${tags.length ? html`<div aria-label="Tags">${tags.map((tag) => html`<span class="tag">${tag}</span>`)}</div>` : null}
    </li>`;
}

function Search({ api, persona }) {
  const [form, setForm] = useState({ q: '', mode: 'all', tag: '' });
  const [found, setFound] = useState(null);
  const [error, setError] = useState(null);
  const submit = async (event) => {
    event.preventDefault();
    if (!form.q.trim()) return;
    const query = new URLSearchParams({ q: form.q, mode: form.mode, limit: '20' });
    if (form.tag.trim()) query.append('tag', form.tag.trim());
    try {
      setError(null);
      setFound(await api.get(`/v1/personas/${encodeURIComponent(persona)}/search?${query}`));
    } catch (failure) { setError(failure); setFound(null); }
  };
  const change = (field) => (event) => setForm({ ...form, [field]: event.target.value });
  return html`
    <section class="card" aria-labelledby="search-title">
      <h2 id="search-title">Search</h2>
      <form role="search" aria-label="Search memory" onSubmit=${submit} class="toolbar">
        <label>Words <input type="search" value=${form.q} onInput=${change('q')} /></label>
        <label>Match <select value=${form.mode} onChange=${change('mode')}>
          <option value="all">all words</option><option value="any">any word</option></select></label>
        <label>Tag <input value=${form.tag} onInput=${change('tag')} placeholder="conversation" /></label>
        <button type="submit">Search</button>
      </form>
      <${ErrorLine} error=${error} />
      ${found ? (found.items.length
        ? html`<ol class="messages" aria-label="Search results">${found.items.map((hit) => html`<${Message} key=${hit.message.id} message=${hit.message} snippet=${hit.snippet} />`)}</ol>`
        : html`<p class="empty" role="status">No message matches.</p>`) : null}
    </section>`;
}

function Pins({ api, persona }) {
  const pins = useLoad(() => api.get(`/v1/personas/${encodeURIComponent(persona)}/pins`), [persona]);
  const [text, setText] = useState('');
  const [error, setError] = useState(null);
  const base = `/v1/personas/${encodeURIComponent(persona)}/pins`;
  const act = async (call) => {
    try { setError(null); await call(); pins.reload(); } catch (failure) { setError(failure); }
  };
  const add = (event) => { event.preventDefault(); if (text.trim()) act(async () => { await api.post(base, { text: text.trim() }); setText(''); }); };
  return html`
    <section class="card" aria-labelledby="pins-title">
      <h2 id="pins-title">Pins</h2>
      <p class="muted">Kept in every conversation (at most five).</p>
      <${Loaded} state=${pins}>${(data) => data.items.length ? html`
        <ul class="pins" aria-label="Pinned items">${data.items.map((pin) => html`
          <li><span>${pin.text}</span><button type="button" class="secondary" aria-label=${`Unpin “${pin.text}”`}
              onClick=${() => act(() => api.del(`${base}/${pin.id}`))}>Unpin</button></li>`)}</ul>`
        : html`<p class="empty">Nothing pinned.</p>`}<//>
      <form onSubmit=${add} aria-label="Pin an item">
        <label>New pin <input value=${text} maxlength="2000" onInput=${(event) => setText(event.target.value)} /></label>
        <button type="submit">Pin</button>
      </form>
      <${ErrorLine} error=${error} />
    </section>`;
}

function Recent({ api, persona, threads }) {
  const [thread, setThread] = useState('');
  const query = new URLSearchParams({ limit: '50' });
  if (thread) query.set('thread', thread);
  const messages = useLoad(() => api.get(`/v1/personas/${encodeURIComponent(persona)}/messages?${query}`), [persona, thread]);
  return html`
    <section aria-labelledby="recent-title">
      <div class="toolbar">
        <h2 id="recent-title">Recent messages</h2>
        <label>Thread <select value=${thread} onChange=${(event) => setThread(event.target.value)}>
          <option value="">all threads</option>
          ${threads.map((item) => html`<option value=${item.id}>${item.title || item.id}</option>`)}</select></label>
        <button type="button" class="secondary" onClick=${messages.reload}>Refresh</button>
      </div>
      <${Loaded} state=${messages}>${(data) => data.items.length
        ? html`<ol class="messages" aria-label="Recent messages">${data.items.map((message) => html`<${Message} key=${message.id} message=${message} />`)}</ol>`
        : html`<p class="empty">No message yet.</p>`}<//>
    </section>`;
}

function Threads({ threads }) {
  return html`
    <section class="card" aria-labelledby="threads-title">
      <h2 id="threads-title">Threads</h2>
      <ul class="compact-list">${threads.map((thread) => html`
        <li><strong>${thread.title || thread.id}</strong> <span class="muted">${thread.parent ? `under ${thread.parent}` : 'main'} · ${thread.open ? 'open' : 'closed'} · <${Time} value=${thread.created_at} /></span>
          ${thread.chronicle ? html`<${Fold} value=${thread.chronicle} label="chronicle" />` : null}</li>`)}</ul>
    </section>`;
}

function PersonaMemory({ api, persona }) {
  const threads = useLoad(() => api.get(`/v1/personas/${encodeURIComponent(persona)}/threads`), [persona]);
  return html`
    <h1>Memory of ${persona}</h1>
    <${Loaded} state=${threads}>${(data) => html`
      <div class="columns">
        <div><${Search} api=${api} persona=${persona} /><${Recent} api=${api} persona=${persona} threads=${data.items} /></div>
        <div><${Pins} api=${api} persona=${persona} /><${Threads} threads=${data.items} /></div>
      </div>`}<//>`;
}

export default function Memory({ api, route, setTitle }) {
  const persona = route.parts[0];
  setTitle(persona ? `Memory of ${persona}` : 'Memory');
  const personas = useLoad(() => (persona ? null : api.get('/v1/personas')), [persona]);
  if (persona) return html`<${PersonaMemory} key=${persona} api=${api} persona=${persona} />`;
  return html`<h1>Memory</h1>
    <${Loaded} state=${personas}>${(data) => html`<ul aria-label="Personas">${(data?.items || []).map((item) => html`
      <li><a href=${href('memory', item.id)}>${item.name} (${item.id})</a></li>`)}</ul>`}<//>`;
}

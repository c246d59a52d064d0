// Personas: the list, a form to create one, and each persona's latest pulses and active plan.

import { html, useState } from '../vendor/htm-preact-standalone.mjs';
import { href } from '../route.js';
import { ErrorLine, Loaded, Status, Time, useLoad } from '../ui.js';

function Create({ api, onCreated }) {
  const [form, setForm] = useState({ id: '', name: '', system_prompt: '' });
  const [error, setError] = useState(null);
  const change = (field) => (event) => setForm({ ...form, [field]: event.target.value });
  const submit = async (event) => {
    event.preventDefault();
    try {
      await api.post('/v1/personas', { ...form, name: form.name || form.id });
      setForm({ id: '', name: '', system_prompt: '' }); setError(null); onCreated();
    } catch (failure) { setError(failure); }
  };
  return html`
    <form class="card create" onSubmit=${submit} aria-labelledby="create-title">
      <h2 id="create-title">New persona</h2>
      <label>Id <input required pattern="[A-Za-z0-9_.\\-]+" value=${form.id} onInput=${change('id')} /></label>
      <label>Name <input value=${form.name} onInput=${change('name')} /></label>
      <label>System prompt <textarea rows="3" value=${form.system_prompt} onInput=${change('system_prompt')}></textarea></label>
      <${ErrorLine} error=${error} />
      <button type="submit">Create</button>
    </form>`;
}

function Persona({ api, persona }) {
  const pulses = useLoad(() => api.get(`/v1/pulses?persona=${encodeURIComponent(persona.id)}&limit=5`), [persona.id]);
  const plans = useLoad(() => api.get(`/v1/personas/${encodeURIComponent(persona.id)}/plans`), [persona.id]);
  const active = (plans.data?.items || []).find((plan) => ['proposed', 'approved', 'executing'].includes(plan.status));
  return html`
    <li class="card persona" data-persona=${persona.id}>
      <h2>${persona.name} <span class="muted">(${persona.id})</span></h2>
      <p class="links">
        ${PAGE_LINKS.map(([page, title]) => html`<a href=${page === 'pulses' ? href(page, { persona: persona.id }) : href(page, persona.id)}>${title}</a>`)}
      </p>
      ${active ? html`<p>Active plan: <a href=${href('plans', persona.id, active.id)}>${active.title || active.id}</a> <${Status} value=${active.status} /></p>` : null}
      <${Loaded} state=${pulses}>${(data) => data.items.length ? html`
        <table class="compact"><caption>Latest pulses</caption>
          <thead><tr><th scope="col">Pulse</th><th scope="col">Playbook</th><th scope="col">Status</th><th scope="col">Started</th></tr></thead>
          <tbody>${data.items.map((pulse) => html`
            <tr><td><a href=${href('pulses', pulse.id)}>${pulse.id.slice(0, 8)}</a></td><td>${pulse.playbook}</td>
                <td><${Status} value=${pulse.pulse_status || pulse.status} /></td><td><${Time} value=${pulse.created_at} /></td></tr>`)}
          </tbody></table>` : html`<p class="muted">No pulse yet.</p>`}<//>
    </li>`;
}

const PAGE_LINKS = [['run', 'Run'], ['memory', 'Memory'], ['pulses', 'Pulses']];

export default function Personas({ api, setTitle }) {
  setTitle('Personas');
  const personas = useLoad(() => api.get('/v1/personas'), []);
  return html`
    <h1>Personas</h1>
    <div class="columns">
      <${Loaded} state=${personas}>${(data) => data.items.length
        ? html`<ul class="cards" aria-label="Personas">${data.items.map((persona) => html`<${Persona} key=${persona.id} api=${api} persona=${persona} />`)}</ul>`
        : html`<p>No persona yet: create one.</p>`}<//>
      <${Create} api=${api} onCreated=${personas.reload} />
    </div>`;
}

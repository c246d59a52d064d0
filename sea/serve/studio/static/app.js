// The studio's shell: the key gate (asked once, kept for the tab), the navigation, the hash
// router that loads one page module at a time, and a status line for errors.

import { html, render, useEffect, useState } from './vendor/htm-preact-standalone.mjs';
import { client, hashWithoutKey, keepKey, keyFromHash, storedKey } from './api.js';
import { PAGES, pageOf } from './pages.js';
import { parseRoute } from './route.js';

function KeyGate({ onKey, error }) {
  const [value, setValue] = useState('');
  const submit = (event) => { event.preventDefault(); if (value.trim()) onKey(value.trim()); };
  return html`
    <main class="gate">
      <h1>SEA studio</h1>
      <form onSubmit=${submit} aria-label="Sign in">
        <label for="key">API key</label>
        <input id="key" type="password" autocomplete="off" value=${value} autofocus
               onInput=${(event) => setValue(event.target.value)} aria-describedby="key-help" />
        <p id="key-help" class="help">The key <code>sea serve</code> printed (or one made with <code>sea keys create</code>). It is kept for this tab only.</p>
        ${error ? html`<p class="error" role="alert">${error}</p>` : null}
        <button type="submit">Open</button>
      </form>
    </main>`;
}

function Nav({ current, onSignOut }) {
  return html`
    <nav class="nav" aria-label="Studio">
      <a class="brand" href="#/personas">SEA studio</a>
      <ul>
        ${PAGES.filter((entry) => !entry.hidden).map((entry) => html`
          <li><a href=${`#/${entry.page}`} aria-current=${entry.page === current ? 'page' : null}>${entry.title}</a></li>`)}
      </ul>
      <button class="link" type="button" onClick=${onSignOut}>Sign out</button>
    </nav>`;
}

function Page({ api, route }) {
  const [loaded, setLoaded] = useState(null);
  const entry = pageOf(route.page);
  useEffect(() => {
    let live = true;
    setLoaded(null);
    if (entry) {
      import(entry.module).then((module) => live && setLoaded({ page: route.page, Component: module.default }))
        .catch((error) => live && setLoaded({ page: route.page, error }));
    }
    return () => { live = false; };
  }, [route.page]);
  if (!entry) return html`<main id="main"><h1>Not found</h1><p>No page “${route.page}”. <a href="#/personas">Personas</a></p></main>`;
  if (!loaded || loaded.page !== route.page) return html`<main id="main"><p role="status" class="loading">Loading…</p></main>`;
  if (loaded.error) return html`<main id="main"><p class="error" role="alert">${String(loaded.error)}</p></main>`;
  const navigate = (hash) => { window.location.hash = hash; };
  const setTitle = (title) => { document.title = title ? `${title} · SEA studio` : 'SEA studio'; };
  return html`<main id="main"><${loaded.Component} api=${api} route=${route} navigate=${navigate} setTitle=${setTitle} /></main>`;
}

function App() {
  const [key, setKey] = useState(() => {
    const given = keyFromHash(window.location.hash);
    if (given) {
      keepKey(given);
      const rest = hashWithoutKey(window.location.hash);
      history.replaceState(null, '', `${window.location.pathname}${window.location.search}${rest}`);
      return given;
    }
    return storedKey();
  });
  const [error, setError] = useState('');
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  const [api, setApi] = useState(null);
  useEffect(() => {
    if (!key) { setApi(null); return; }
    const candidate = client(key);
    candidate.get('/v1/personas').then(() => { setApi(candidate); setError(''); })
      .catch((failure) => {
        keepKey(null); setKey(null);
        setError(failure.status === 401 ? 'That key was not accepted.' : failure.message);
      });
  }, [key]);
  if (!key) return html`<${KeyGate} onKey=${(given) => { keepKey(given); setKey(given); }} error=${error} />`;
  if (!api) return html`<p role="status" class="loading">Checking the key…</p>`;
  const signOut = () => { keepKey(null); setKey(null); setApi(null); };
  return html`
    <a class="skip" href="#main" onClick=${(event) => { event.preventDefault(); document.getElementById('main')?.focus(); }}>Skip to content</a>
    <${Nav} current=${route.page} onSignOut=${signOut} />
    <${Page} api=${api} route=${route} />`;
}

render(html`<${App} />`, document.getElementById('app'));

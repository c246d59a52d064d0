// The studio's one way to the server: fetch with the tab's key, SEA's error body mapped to
// an ApiError (code, message, hint, status), JSON in and out.

const KEY = 'sea.studio.key';

/** The key kept for this tab (sessionStorage), or null. */
export function storedKey(storage = globalThis.sessionStorage) {
  return storage ? storage.getItem(KEY) : null;
}

/** Keep (or forget, with null) the tab's key. */
export function keepKey(key, storage = globalThis.sessionStorage) {
  if (!storage) return;
  if (key) storage.setItem(KEY, key); else storage.removeItem(KEY);
}

/** A key given in the address's fragment (`#key=...` or `#/page?key=...`), or null. */
export function keyFromHash(hash) {
  const found = /(?:^#|[?&#])key=([^&]+)/.exec(hash || '');
  return found ? decodeURIComponent(found[1]) : null;
}

/** The fragment without its key (so the key does not stay in the address bar or history). */
export function hashWithoutKey(hash) {
  const rest = (hash || '').replace(/([?&#])key=[^&]*&?/, '$1').replace(/[?&]$/, '');
  return rest === '#' ? '' : rest;
}

export class ApiError extends Error {
  constructor(status, code, message, hint) {
    super(message);
    this.status = status;
    this.code = code;
    this.hint = hint || '';
  }
}

/** SEA's error body (`{"error": {"code","message","hint"}}`) or FastAPI's (`{"detail"}`). */
export function errorOf(status, body) {
  const error = body && typeof body === 'object' ? body.error : null;
  if (error && typeof error === 'object') {
    return new ApiError(status, error.code || `HTTP${status}`, error.message || `HTTP ${status}`, error.hint);
  }
  const detail = body && typeof body === 'object' ? body.detail : body;
  const text = typeof detail === 'string' ? detail : detail ? JSON.stringify(detail) : `HTTP ${status}`;
  return new ApiError(status, `HTTP${status}`, text, '');
}

/** A client bound to a key: `api.get('/v1/personas')`, `api.post(path, body)`, `api.raw(path, init)`. */
export function client(key, fetchImpl = globalThis.fetch.bind(globalThis)) {
  const headers = (extra) => ({ 'x-api-key': key, ...extra });
  async function raw(path, init = {}) {
    return fetchImpl(path, { ...init, headers: headers(init.headers || {}) });
  }
  async function call(method, path, body, extraHeaders) {
    const init = { method, headers: { accept: 'application/json', ...(extraHeaders || {}) } };
    if (body !== undefined) {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const response = await raw(path, init);
    const text = await response.text();
    let parsed = null;
    if (text) {
      try { parsed = JSON.parse(text); } catch { parsed = text; }
    }
    if (!response.ok) throw errorOf(response.status, parsed);
    return parsed;
  }
  return {
    key,
    raw,
    get: (path, headers) => call('GET', path, undefined, headers),
    post: (path, body, headers) => call('POST', path, body ?? {}, headers),
    put: (path, body, headers) => call('PUT', path, body, headers),
    patch: (path, body, headers) => call('PATCH', path, body, headers),
    del: (path, headers) => call('DELETE', path, undefined, headers),
  };
}

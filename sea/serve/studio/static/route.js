// The studio's addresses: `#/page/part/part?name=value`. Pure, for `node --test`.

/** The route a fragment names: {page, parts, query}; the default page is `personas`. */
export function parseRoute(hash) {
  const text = (hash || '').replace(/^#\/?/, '');
  const [path, search = ''] = text.split('?', 2);
  const parts = path.split('/').filter(Boolean).map((part) => decodeURIComponent(part));
  const query = {};
  for (const pair of search.split('&').filter(Boolean)) {
    const [name, value = ''] = pair.split('=', 2);
    if (name !== 'key') query[decodeURIComponent(name)] = decodeURIComponent(value);
  }
  return { page: parts[0] || 'personas', parts: parts.slice(1), query };
}

/** The fragment of a route: `href('playbooks', 'meta_user')` → `#/playbooks/meta_user`. */
export function href(page, ...parts) {
  let query = '';
  if (parts.length && parts[parts.length - 1] && typeof parts[parts.length - 1] === 'object') {
    const entries = Object.entries(parts.pop()).filter(([, value]) => value !== undefined && value !== null && value !== '');
    if (entries.length) query = `?${entries.map(([n, v]) => `${encodeURIComponent(n)}=${encodeURIComponent(v)}`).join('&')}`;
  }
  return `#/${[page, ...parts].map((part) => encodeURIComponent(part)).join('/')}${query}`;
}

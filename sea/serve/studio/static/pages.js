// The studio's pages: the navigation's entries, in order, and the module of each. A page
// module exports `default`, a component given {api, route, navigate, setTitle}.

export const PAGES = [
  { page: 'personas', title: 'Personas', module: './pages/personas.js' },
];

export function pageOf(name) {
  return PAGES.find((entry) => entry.page === name) || null;
}

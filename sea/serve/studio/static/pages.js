// The studio's pages: the navigation's entries, in order, and the module of each. A page
// module exports `default`, a component given {api, route, navigate, setTitle}.

export const PAGES = [
  { page: 'personas', title: 'Personas', module: './pages/personas.js' },
  { page: 'playbooks', title: 'Playbooks', module: './pages/playbooks.js' },
  { page: 'edit', title: 'Editor', module: './pages/playbooks.js', hidden: true },
  { page: 'run', title: 'Run', module: './pages/run.js', hidden: true },
];

export function pageOf(name) {
  return PAGES.find((entry) => entry.page === name) || null;
}

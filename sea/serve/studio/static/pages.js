// The studio's pages: the navigation's entries, in order, and the module of each. A page
// module exports `default`, a component given {api, route, navigate, setTitle}.

export const PAGES = [
  { page: 'personas', title: 'Personas', module: './pages/personas.js' },
  { page: 'playbooks', title: 'Playbooks', module: './pages/playbooks.js' },
  { page: 'edit', title: 'Editor', module: './pages/playbooks.js', hidden: true },
  { page: 'run', title: 'Run', module: './pages/run.js', hidden: true },
  { page: 'approvals', title: 'Approvals', module: './pages/approvals.js' },
  { page: 'plans', title: 'Plans', module: './pages/plans.js', hidden: true },
  { page: 'pulses', title: 'Pulses', module: './pages/pulses.js' },
  { page: 'memory', title: 'Memory', module: './pages/memory.js' },
  { page: 'stats', title: 'Stats', module: './pages/stats.js' },
  { page: 'regression', title: 'Regression', module: './pages/regression.js' },
  { page: 'evals', title: 'Evals', module: './pages/evals.js' },
];

export function pageOf(name) {
  return PAGES.find((entry) => entry.page === name) || null;
}

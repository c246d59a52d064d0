// The layout adapter: a playbook's graph (the server's `/v1/playbooks/{name}/graph`, or a
// document being edited) as a model of nodes and edges, laid out left to right by dagre.
// Pure: no DOM, so `node --test` runs it. The drawing is graphview.js.

export const END = '__end__';

/** The server's graph JSON as a model: nodes (id, type, label, shape) and edges (id, source,
 *  target, kind, label); an edge to the end (target null) goes to an END node. */
export function modelFromGraph(graph) {
  const nodes = graph.nodes.map((node) => ({
    id: node.id, type: node.type, label: node.label || node.id, shape: node.shape || 'rect',
    detail: node.detail || '',
  }));
  const edges = [];
  let ends = false;
  graph.edges.forEach((edge, index) => {
    const target = edge.target ?? END;
    if (target === END) ends = true;
    edges.push({ id: `e${index}`, source: edge.source, target, kind: edge.kind || 'next', label: edge.label || '' });
  });
  if (ends) nodes.push({ id: END, type: 'end', label: 'END', shape: 'circle', detail: '' });
  return { start: graph.start, nodes, edges };
}

/** A rough width for a label (the page's font is not measured: layout stays pure). */
export function textWidth(text, perChar = 7.2) {
  let width = 0;
  for (const char of String(text)) width += char.codePointAt(0) > 0x2e80 ? perChar * 1.9 : perChar;
  return Math.ceil(width);
}

/** The model laid out left to right: positions of nodes (centre x, y; w, h) and each edge's
 *  points and label position. Loops are kept (dagre reverses them for ranking). */
export function layout(model, dagre, options = {}) {
  const graph = new dagre.graphlib.Graph({ multigraph: true });
  graph.setGraph({ rankdir: options.rankdir || 'LR', nodesep: 28, ranksep: 56, edgesep: 14,
    marginx: 12, marginy: 12 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of model.nodes) {
    const width = node.type === 'end' ? 56 : Math.max(80, textWidth(node.label) + 28);
    graph.setNode(node.id, { width, height: node.type === 'end' ? 32 : 40 });
  }
  const known = new Set(model.nodes.map((node) => node.id));
  const drawn = model.edges.filter((edge) => known.has(edge.source) && known.has(edge.target));
  for (const edge of drawn) {
    const label = edge.label ? { width: textWidth(edge.label, 6.4) + 8, height: 16, labelpos: 'c' } : {};
    graph.setEdge(edge.source, edge.target, { ...label }, edge.id);
  }
  dagre.layout(graph);
  const size = graph.graph();
  return {
    width: Math.ceil(size.width || 0),
    height: Math.ceil(size.height || 0),
    nodes: model.nodes.map((node) => {
      const at = graph.node(node.id);
      return { ...node, x: at.x, y: at.y, w: at.width, h: at.height };
    }),
    edges: drawn.map((edge) => {
      const at = graph.edge({ v: edge.source, w: edge.target, name: edge.id });
      return { ...edge, points: at.points.map((p) => ({ x: p.x, y: p.y })),
        labelX: at.x ?? null, labelY: at.y ?? null, loop: edge.source === edge.target };
    }),
  };
}

/** An SVG path through an edge's points (a smooth curve through the middle points). */
export function pathOf(points) {
  if (!points.length) return '';
  const [first, ...rest] = points;
  let d = `M${first.x.toFixed(1)},${first.y.toFixed(1)}`;
  if (rest.length === 1) return `${d} L${rest[0].x.toFixed(1)},${rest[0].y.toFixed(1)}`;
  for (let i = 0; i < rest.length - 1; i += 1) {
    const control = rest[i];
    const next = i === rest.length - 2 ? rest[i + 1]
      : { x: (rest[i].x + rest[i + 1].x) / 2, y: (rest[i].y + rest[i + 1].y) / 2 };
    d += ` Q${control.x.toFixed(1)},${control.y.toFixed(1)} ${next.x.toFixed(1)},${next.y.toFixed(1)}`;
  }
  return d;
}

const TYPE_SHAPES = { pass: 'diamond', subplay: 'subroutine', exec: 'subroutine', tool: 'rect',
  tool_call: 'rect', llm: 'rounded', set: 'rect' };
const DETAIL_FIELDS = ['playbook', 'action', 'playbook_source'];

/** A playbook's document as it is being written (valid or not) as a model: every node with
 *  an id (later duplicates and nodes without one left out), every edge its `next`,
 *  `conditional_next` and `error_next` declare; a target that is no node is kept as a
 *  `dangling` edge to a node marked `missing`, so the drawing shows the typo. */
export function modelFromDocument(document) {
  const empty = { start: null, nodes: [], edges: [] };
  if (!document || typeof document !== 'object' || !Array.isArray(document.nodes)) return empty;
  const nodes = [];
  const seen = new Set();
  for (const raw of document.nodes) {
    if (!raw || typeof raw !== 'object' || typeof raw.id !== 'string' || !raw.id || seen.has(raw.id)) continue;
    seen.add(raw.id);
    const type = typeof raw.type === 'string' ? raw.type : '?';
    const field = DETAIL_FIELDS.find((name) => typeof raw[name] === 'string' && raw[name]);
    const detail = field ? raw[field] : '';
    nodes.push({ id: raw.id, type, label: `${raw.id}: ${type}${detail ? ` ${detail}` : ''}`,
      shape: TYPE_SHAPES[type] || 'rect', detail });
  }
  const edges = [];
  const missing = new Set();
  let ends = false;
  const add = (source, target, kind, label) => {
    if (target !== null && target !== undefined && typeof target !== 'string') return;
    const to = target === null || target === undefined || target === '' ? END : target;
    if (to === END) ends = true;
    else if (!seen.has(to)) missing.add(to);
    edges.push({ id: `e${edges.length}`, source, target: to, kind, label: label || '' });
  };
  const drawn = new Set();
  for (const raw of document.nodes) {
    if (!raw || typeof raw !== 'object' || !seen.has(raw.id) || drawn.has(raw.id)) continue;
    drawn.add(raw.id);
    const cond = raw.conditional_next;
    if (cond && typeof cond === 'object' && cond.cases && typeof cond.cases === 'object') {
      for (const [key, target] of Object.entries(cond.cases)) add(raw.id, target, 'case', key);
      if (cond.default !== undefined || !('default' in cond.cases)) add(raw.id, cond.default, 'default', 'default');
    } else {
      add(raw.id, raw.next, 'next', '');
    }
    if (typeof raw.error_next === 'string') add(raw.id, raw.error_next, 'error', 'error');
  }
  for (const id of missing) nodes.push({ id, type: 'missing', label: `${id}?`, shape: 'rect', detail: '' });
  if (ends) nodes.push({ id: END, type: 'end', label: 'END', shape: 'circle', detail: '' });
  const start = typeof document.start_node === 'string' ? document.start_node : (nodes[0]?.id ?? null);
  return { start, nodes, edges };
}

/** A model whose node ids are prefixed (`sub_speak` + `compose` → `sub_speak.compose`): a
 *  callee drawn beside its caller, its nodes told apart from the caller's. */
export function prefixModel(model, prefix) {
  const id = (value) => `${prefix}.${value}`;
  return {
    start: model.start === null ? null : id(model.start),
    nodes: model.nodes.map((node) => ({ ...node, id: id(node.id) })),
    edges: model.edges.map((edge) => ({ ...edge, id: id(edge.id), source: id(edge.source), target: id(edge.target) })),
  };
}

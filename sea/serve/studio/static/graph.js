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

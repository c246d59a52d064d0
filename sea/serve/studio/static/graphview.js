// A laid-out graph drawn as SVG of our own: every node an element with `data-node` (its
// id) and classes for its type and state (running, done, failed, waiting, error-diag,
// warning-diag, selected, defines, reads), edges solid (next), labelled (case, default)
// or dashed (error). Nodes are buttons: focusable, labelled, Enter selects.

import { html, useMemo } from './vendor/htm-preact-standalone.mjs';
import dagre from './vendor/dagre.esm.js';
import { END, layout, pathOf } from './graph.js';

function nodeShape(node) {
  const { w, h } = node;
  const x = -w / 2; const y = -h / 2;
  if (node.type === 'end') return html`<circle r=${h / 2} class="shape" />`;
  if (node.shape === 'diamond' || node.shape === 'hexagon') {
    const inset = 12;
    return html`<polygon class="shape" points=${`${x + inset},${y} ${x + w - inset},${y} ${x + w},0 ${x + w - inset},${-y} ${x + inset},${-y} ${x},0`} />`;
  }
  const radius = node.shape === 'rounded' || node.shape === 'stadium' ? h / 2 : 6;
  return html`<rect class="shape" x=${x} y=${y} width=${w} height=${h} rx=${radius} />`;
}

/**
 * The graph. `states`: {nodeId: 'running'|'done'|'failed'|'waiting'}; `marks`: {nodeId:
 * [class, ...]} (diagnostics, overlays); `selected`: a node id; `onSelect(id)`; `badges`:
 * {nodeId: {text, kind, title}} drawn at a node's corner (a diagnostic count).
 */
export function GraphView({ model, states = {}, marks = {}, selected = null, onSelect, label = 'Playbook graph', badges = {} }) {
  const laid = useMemo(() => (model ? layout(model, dagre) : null), [model]);
  if (!laid) return html`<div class="graph empty">No graph</div>`;
  const select = (id) => onSelect && onSelect(id);
  return html`
    <div class="graph" role="group" aria-label=${label}>
      <svg viewBox=${`0 0 ${laid.width} ${laid.height}`} width=${laid.width} height=${laid.height}
           xmlns="http://www.w3.org/2000/svg" role="img" aria-label=${label}>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" class="arrowhead" />
          </marker>
        </defs>
        ${laid.edges.map((edge) => html`
          <g class=${`edge ${edge.kind}`} data-edge=${edge.id} data-source=${edge.source} data-target=${edge.target}>
            <path d=${pathOf(edge.points)} marker-end="url(#arrow)" />
            ${edge.label && edge.labelX !== null ? html`
              <text x=${edge.labelX} y=${edge.labelY + 4} text-anchor="middle" class="edge-label">${edge.label}</text>` : null}
          </g>`)}
        ${laid.nodes.map((node) => {
          const state = states[node.id] || '';
          const classes = ['node', `type-${node.type}`, state, ...(marks[node.id] || []),
            node.id === selected ? 'selected' : '', node.id === model.start ? 'start' : ''].filter(Boolean).join(' ');
          const name = node.id === END ? 'end' : `${node.id}, ${node.type}${state ? `, ${state}` : ''}`;
          return html`
            <g class=${classes} data-node=${node.id} data-state=${state || null} transform=${`translate(${node.x},${node.y})`}
               tabindex="0" role="button" aria-label=${name} aria-pressed=${node.id === selected ? 'true' : 'false'}
               onClick=${() => select(node.id)}
               onKeyDown=${(event) => { if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); select(node.id); } }}>
              ${nodeShape(node)}
              <text text-anchor="middle" y="4">${node.id === END ? 'END' : node.label}</text>
              ${badges[node.id] ? html`
                <g class=${`node-badge ${badges[node.id].kind || ''}`} data-badge=${node.id} transform=${`translate(${node.w / 2 - 4},${-node.h / 2})`}>
                  <title>${badges[node.id].title || badges[node.id].text}</title>
                  <circle r="9" /><text text-anchor="middle" y="4">${badges[node.id].text}</text>
                </g>` : null}
            </g>`;
        })}
      </svg>
    </div>`;
}

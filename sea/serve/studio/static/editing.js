// The editor's logic without the page: where a line starts, which lines and nodes carry a
// diagnostic, what the variable overlay lights up, and what the graph shows while the text
// is being written. Pure: no DOM, so `node --test` runs it.

import { modelFromDocument, modelFromGraph } from './graph.js';

/** The offset in `text` of `line`:`column` (both from 1; past the end: the end). */
export function offsetOf(text, line, column = 1) {
  let offset = 0;
  for (let n = 1; n < line; n += 1) {
    const at = text.indexOf('\n', offset);
    if (at < 0) return text.length;
    offset = at + 1;
  }
  const end = text.indexOf('\n', offset);
  const lineEnd = end < 0 ? text.length : end;
  return Math.min(offset + Math.max(0, (column || 1) - 1), lineEnd);
}

/** How many lines `text` has (an empty text has one). */
export function lineCount(text) {
  let count = 1;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) count += 1;
  return count;
}

const RANK = { error: 2, warning: 1 };

/** Line → the worst severity of the diagnostics on it ('error' or 'warning'). */
export function lineMarks(diagnostics) {
  const marks = {};
  for (const diagnostic of diagnostics || []) {
    if (!diagnostic.line) continue;
    const severity = diagnostic.severity === 'error' ? 'error' : 'warning';
    if ((RANK[marks[diagnostic.line]] || 0) < RANK[severity]) marks[diagnostic.line] = severity;
  }
  return marks;
}

/** Node id → the graph's classes for its diagnostics (`error-diag`, `warning-diag`). */
export function diagnosticMarks(diagnostics) {
  const marks = {};
  for (const diagnostic of diagnostics || []) {
    if (!diagnostic.node_id) continue;
    const mark = diagnostic.severity === 'error' ? 'error-diag' : 'warning-diag';
    const list = marks[diagnostic.node_id] || (marks[diagnostic.node_id] = []);
    if (!list.includes(mark)) list.push(mark);
  }
  return marks;
}

/** Node id → how many diagnostics of each severity it has ({errors, warnings}). */
export function nodeCounts(diagnostics) {
  const counts = {};
  for (const diagnostic of diagnostics || []) {
    if (!diagnostic.node_id) continue;
    const count = counts[diagnostic.node_id] || (counts[diagnostic.node_id] = { errors: 0, warnings: 0 });
    if (diagnostic.severity === 'error') count.errors += 1; else count.warnings += 1;
  }
  return counts;
}

/** Node id → its badge in the drawing: how many diagnostics it has, red when one is an
 *  error, and what they are (the badge's title). */
export function diagnosticBadges(diagnostics) {
  const badges = {};
  for (const diagnostic of diagnostics || []) {
    if (!diagnostic.node_id) continue;
    const badge = badges[diagnostic.node_id] || (badges[diagnostic.node_id] = { count: 0, kind: 'warning', lines: [] });
    badge.count += 1;
    if (diagnostic.severity === 'error') badge.kind = 'error';
    badge.lines.push(`${diagnostic.code} ${diagnostic.severity}: ${diagnostic.message}`);
  }
  const out = {};
  for (const [id, badge] of Object.entries(badges)) out[id] = { text: String(badge.count), kind: badge.kind, title: badge.lines.join('\n') };
  return out;
}

/** The overlay of one variable: the nodes that define it (`defines`), that read it
 *  (`reads`, or `reads-undefined` when nothing defines it). */
export function overlayMarks(variables, name) {
  const marks = {};
  const found = (variables || []).find((item) => item.name === name);
  if (!found) return marks;
  const add = (id, mark) => { (marks[id] || (marks[id] = [])).push(mark); };
  for (const id of found.defined_by) if (id !== 'input_schema') add(id, 'defines');
  for (const id of found.read_by) add(id, found.defined ? 'reads' : 'reads-undefined');
  return marks;
}

/** Marks merged: node id → every class any of them gives it. */
export function mergeMarks(...all) {
  const merged = {};
  for (const marks of all) {
    for (const [id, list] of Object.entries(marks || {})) merged[id] = [...(merged[id] || []), ...list];
  }
  return merged;
}

/** JSON.parse, or undefined when the text is not JSON. */
export function parsed(text) {
  try { return JSON.parse(text); } catch { return undefined; }
}

/** The model with a node (type `missing`) for each edge's target that is no node: a typo
 *  in a `next` is drawn, not dropped. */
export function withMissing(model) {
  const known = new Set(model.nodes.map((node) => node.id));
  const missing = [...new Set(model.edges.map((edge) => edge.target).filter((id) => !known.has(id)))];
  if (!missing.length) return model;
  return { ...model, nodes: [...model.nodes, ...missing.map((id) => ({ id, type: 'missing', label: `${id}?`, shape: 'rect', detail: '' }))] };
}

/** What the graph shows for a text: the server's graph when it gave one, else the document
 *  itself when the text is JSON, else the last one (a typo in the JSON keeps the view). */
export function graphFor(text, serverGraph, last) {
  if (serverGraph) return withMissing(modelFromGraph(serverGraph));
  const document = parsed(text);
  if (document === undefined) return last || null;
  const model = modelFromDocument(document);
  return model.nodes.length ? model : (last || model);
}

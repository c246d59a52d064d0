// A unified diff (what a plan's preview gives for each spec) as lines to draw: each line's
// kind (file header, hunk header, added, removed, context, note) and its old and new line
// numbers. Pure, for `node --test`: no diff is computed here, only read.

/** The kind of one line of a unified diff. */
export function classify(line) {
  if (line.startsWith('+++ ') || line.startsWith('--- ')) return 'file';
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  if (line.startsWith('\\')) return 'note'; // "\ No newline at end of file"
  return 'context';
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

/**
 * The lines of a unified diff: {kind, text, old, new} with `old`/`new` the line numbers in
 * the old and new file (null where the line is not in that file, or is a header).
 */
export function diffLines(text) {
  const lines = (text || '').split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  let oldAt = 0;
  let newAt = 0;
  let inHunk = false;
  return lines.map((line) => {
    let kind = classify(line);
    if (kind === 'file' && inHunk) kind = line.startsWith('+') ? 'add' : 'del'; // "+++x" in a hunk
    const row = { kind, text: line, old: null, new: null };
    if (kind === 'hunk') {
      const found = HUNK.exec(line);
      if (found) { oldAt = Number(found[1]); newAt = Number(found[2]); inHunk = true; }
    } else if (kind === 'add' && inHunk) {
      row.new = newAt++;
    } else if (kind === 'del' && inHunk) {
      row.old = oldAt++;
    } else if (kind === 'context' && inHunk) {
      row.old = oldAt++; row.new = newAt++;
    }
    return row;
  });
}

/** How many lines a diff adds and removes: {added, removed}. */
export function diffCounts(text) {
  let added = 0;
  let removed = 0;
  for (const line of diffLines(text)) {
    if (line.kind === 'add') added += 1;
    else if (line.kind === 'del') removed += 1;
  }
  return { added, removed };
}

/** What screen readers hear for a line's kind. */
export const KIND_LABEL = { add: 'added', del: 'removed', context: 'unchanged', hunk: 'lines', file: 'file', note: 'note' };

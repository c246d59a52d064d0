// Horizontal bar charts of our own (SVG drawn by the page): the geometry of each bar.
// Pure, for `node --test`.

/**
 * The bars of `rows` by `value(row)`: {key, value, width, y} with `width` scaled so the
 * largest value spans `span` units (0 for none); `row` rows of `rowHeight` units, in order.
 */
export function bars(rows, value, { span = 600, rowHeight = 22 } = {}) {
  const values = rows.map((row) => Math.max(0, Number(value(row)) || 0));
  const top = Math.max(0, ...values);
  return rows.map((row, index) => ({
    key: String(row.key),
    value: values[index],
    width: top > 0 ? (values[index] / top) * span : 0,
    y: index * rowHeight,
  }));
}

/** A number as a short text: integers whole, others to 3 significant digits. */
export function shortNumber(value) {
  if (!Number.isFinite(value)) return '—';
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  if (value === 0) return '0';
  return Number(value.toPrecision(3)).toString();
}

// Asking a trace or a what-if from the graph, pure: the form's values as the API's question.

export const PREDICATE_OPS = ['contains', 'equals', 'prefix', 'regex', 'in'];

/** A field reference as the API wants it: an int for a position, else the name; null when blank. */
export function fieldOf(text) {
  const value = String(text ?? '').trim();
  if (!value) return null;
  return /^\d+$/.test(value) ? Number(value) : value;
}

/** Record ids typed as "1, 2 3": integers; an error names what is not one. */
export function idsOf(text) {
  const parts = String(text ?? '').split(/[\s,;]+/).filter(Boolean);
  const bad = parts.find((p) => !/^\d+$/.test(p));
  if (bad !== undefined) return { error: `"${bad}" is not a record id (a whole number)` };
  if (!parts.length) return { error: 'type at least one record id' };
  return { ids: parts.map(Number) };
}

/**
 * The body of POST /api/v1/traces/ or /api/v1/whatifs/ from the form's values:
 * {kind: 'trace'|'whatif', application, capturePoint, direction, selectionKind: 'all'|'ids'|'predicate',
 *  ids, field, op, value, target, name}. Returns {body} or {error} (what to fix, in words).
 */
export function questionBody(values) {
  let selection;
  if (values.selectionKind === 'all') selection = { all: true };
  else if (values.selectionKind === 'ids') {
    const parsed = idsOf(values.ids);
    if (parsed.error) return { error: parsed.error };
    selection = { ids: parsed.ids };
  } else {
    if (!PREDICATE_OPS.includes(values.op)) return { error: `choose an operation (${PREDICATE_OPS.join(', ')})` };
    const raw = String(values.value ?? '');
    if (!raw) return { error: 'type the value the records must match' };
    const value = values.op === 'in' ? raw.split(',').map((v) => v.trim()).filter(Boolean) : raw;
    const predicate = { op: values.op, value };
    const field = fieldOf(values.field);
    if (field !== null) predicate.field = field;
    selection = { predicate };
  }
  const body = { application: values.application, selection };
  if (values.capturePoint) body.capture_point = values.capturePoint;
  if (values.kind !== 'whatif') {
    body.direction = values.direction === 'forward' ? 'forward' : 'backward';
    body.target = values.target || 'end';
  }
  if (values.name) body.name = String(values.name).trim();
  return { body };
}

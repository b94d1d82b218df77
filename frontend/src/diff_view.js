// Pure parts of the diff page: the summary's outputs as table rows, and the additive check as a sentence.

export const DIFF_FATES = ['changed', 'added', 'removed', 'unchanged'];

const shown = (values) => (values.length ? values.map((v) => JSON.stringify(v)).join(', ') : '—');

/** Rows of the outputs table from a diff's summary: [{key, fate, old, new}] with values as text. */
export function outputRows(summary) {
  return (summary?.outputs ?? []).map((o) => ({
    key: o.key, keyText: JSON.stringify(o.key), fate: o.fate, old: shown(o.old_value), new: shown(o.new_value),
  }));
}

/** The additive check of an explained output, in words. */
export function checkText(explained) {
  if (!explained) return '';
  const check = explained.check;
  if (!check) {
    return explained.why_no_check
      ? `The additive check was not made: ${explained.why_no_check}.`
      : 'The additive check applies to numeric outputs of sums and counts only.';
  }
  const names = [...new Set([...Object.keys(check.old), ...Object.keys(check.new), ...Object.keys(check.added),
    ...Object.keys(check.removed)])];
  const parts = names.map((n) => {
    const change = (check.new[n] ?? 0) - (check.old[n] ?? 0);
    return `${n}: ${check.old[n] ?? 0} → ${check.new[n] ?? 0} (change ${change}) = added ${check.added[n] ?? 0} − removed ${check.removed[n] ?? 0}`;
  });
  return `${check.holds ? 'The explanation adds up' : 'The explanation does not add up'}, by replaying the job's functions on the added and removed records: ${parts.join('; ')}.`;
}

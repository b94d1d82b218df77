// The diff page: two runs of one job, every output with its fate side by side, and for one output
// its old and new value and the input records added and removed (asked as a one-output diff).

import { el, errorText, fetchJson, sendJson, statusBadge } from './dom.js';
import { formatCount } from './format.js';
import { DIFF_FATES, checkText, outputRows } from './diff_view.js';

const POLL_MS = 1000;

async function finished(url) {
  for (;;) {
    const diff = await fetchJson(url);
    if (!['queued', 'running'].includes(diff.status)) return diff;
    await new Promise((resolve) => { setTimeout(resolve, POLL_MS); });
  }
}

function header(d) {
  const counts = d.summary?.counts ?? {};
  return el('div', { class: 'app-header' },
    el('h1', {}, d.name || `Diff ${d.id}`, ' ', statusBadge(d.status)),
    el('dl', { class: 'facts' },
      el('dt', {}, 'Old run'), el('dd', {}, el('a', { href: `/applications/${d.compared_with}/` }, d.compared_with)),
      el('dt', {}, 'New run'), el('dd', {}, el('a', { href: `/applications/${d.application}/` }, d.application)),
      el('dt', {}, 'Output'), el('dd', {}, d.target)),
    el('ul', { class: 'fates', id: 'diff-counts' },
      DIFF_FATES.map((f) => el('li', { class: `fate fate-${f}` }, `${formatCount(counts[f] ?? 0)} ${f}`))));
}

function explanation(explained) {
  const inputs = (side) => explained.inputs.filter((r) => r.side === side).map((r) => el('tr', { class: `input-${side}` },
    el('td', {}, side), el('td', {}, JSON.stringify(r.value)), el('td', {}, `${r.file}`), el('td', {}, String(r.offset))));
  return el('section', { id: 'explanation', 'data-key': JSON.stringify(explained.key) },
    el('h2', {}, `Output ${JSON.stringify(explained.key)}: ${explained.fate}`),
    el('p', {}, `Old value ${JSON.stringify(explained.old_value)}, new value ${JSON.stringify(explained.new_value)}. `,
      `${formatCount(explained.added)} input records added, ${formatCount(explained.removed)} removed, `,
      `${formatCount(explained.common)} in both runs.`),
    el('p', { id: 'additive-check', class: explained.check?.holds ? 'holds' : '' }, checkText(explained)),
    el('table', { id: 'explanation-inputs' },
      el('thead', {}, el('tr', {}, ['Input', 'Record', 'File', 'Offset'].map((h) => el('th', {}, h)))),
      el('tbody', {}, inputs('added'), inputs('removed'))));
}

/** Mount on `root` (data-api-url: the diff's API URL). */
export async function mountDiffPage(root) {
  root.dataset.state = 'loading';
  const diff = await finished(root.dataset.apiUrl);
  const slot = el('div', { id: 'explanation-slot' });
  const explain = async (key) => {
    slot.replaceChildren(el('p', { role: 'status' }, `Explaining ${JSON.stringify(key)}…`));
    const asked = await sendJson('/api/v1/diffs/', {
      application: diff.application, compared_with: diff.compared_with, capture_point: diff.target, key,
    });
    if (!asked.ok) { slot.replaceChildren(el('p', { class: 'error', role: 'alert' }, errorText(asked))); return; }
    const one = await finished(asked.body.url);
    slot.replaceChildren(one.status === 'succeeded' ? explanation(one.summary.explained)
      : el('p', { class: 'error', role: 'alert' }, one.error));
  };
  const rows = outputRows(diff.summary).map((r) => el('tr', { class: `fate-${r.fate}`, 'data-fate': r.fate },
    el('td', {}, r.keyText), el('td', {}, r.fate), el('td', {}, r.old), el('td', {}, r.new),
    el('td', {}, r.fate === 'unchanged' ? '' : el('button', { type: 'button', class: 'explain', onclick: () => explain(r.key) }, 'Why?'))));
  root.replaceChildren(header(diff),
    diff.status === 'succeeded'
      ? el('table', { id: 'diff-outputs' },
        el('thead', {}, el('tr', {}, ['Key', 'Fate', 'Old run', 'New run', ''].map((h) => el('th', {}, h)))),
        el('tbody', {}, rows))
      : el('p', { class: 'error', role: 'alert' }, diff.error),
    diff.summary?.explained ? explanation(diff.summary.explained) : slot,
    el('p', {}, el('a', { href: diff.links.download_csv }, 'Download CSV'), ' · ',
      el('a', { href: diff.links.download_jsonl }, 'JSON lines')));
  root.dataset.state = 'ready';
}

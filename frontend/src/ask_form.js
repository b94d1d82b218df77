// The form that asks a trace or a what-if from a capture point of the graph (the node panel).

import { PREDICATE_OPS, questionBody } from './ask.js';
import { el, errorText, sendJson } from './dom.js';

const ENDPOINT = { trace: '/api/v1/traces/', whatif: '/api/v1/whatifs/' };

/**
 * The form for `kind` ('trace' or 'whatif') from `capturePoint` of `application`; on success the
 * browser goes to the new question's page, where its progress shows.
 */
export function askForm({ kind, direction = 'backward', application, capturePoint }) {
  const radio = (value, text, checked = false) => el('label', { class: 'choice' },
    el('input', { type: 'radio', name: 'selection-kind', value, checked }), text);
  const field = el('input', { type: 'text', name: 'field', id: 'ask-field', placeholder: 'whole record', size: 8 });
  const op = el('select', { name: 'op', id: 'ask-op' }, PREDICATE_OPS.map((o) => el('option', { value: o }, o)));
  const value = el('input', { type: 'text', name: 'value', id: 'ask-value', placeholder: 'e.g. user=Guest' });
  const ids = el('input', { type: 'text', name: 'ids', id: 'ask-ids', placeholder: 'e.g. 12, 40' });
  const target = el('select', { name: 'target', id: 'ask-target' },
    el('option', { value: 'end' }, direction === 'forward' ? 'to the job\'s outputs' : 'to the job\'s inputs'),
    el('option', { value: 'step' }, 'one step'));
  const name = el('input', { type: 'text', name: 'name', id: 'ask-name', placeholder: 'optional', maxlength: 200 });
  const error = el('p', { class: 'error', role: 'alert', hidden: true });
  const title = kind === 'whatif' ? 'What if these records were deleted?' : `Trace ${direction} from here`;
  const submit = el('button', { type: 'submit', id: 'ask-submit' }, kind === 'whatif' ? 'Run the what-if' : 'Trace');
  const form = el('form', { class: 'ask-form', id: 'ask-form', 'data-kind': kind },
    el('h3', {}, title),
    el('fieldset', {}, el('legend', {}, kind === 'whatif' ? 'Records deleted' : 'Records to follow'),
      radio('predicate', 'matching', true), el('div', { class: 'predicate' },
        el('label', {}, 'Field ', field), el('label', {}, ' ', op), el('label', {}, ' Value ', value)),
      radio('ids', 'by id'), el('div', { class: 'ids' }, ids),
      radio('all', 'all of them')),
    kind === 'whatif' ? null : el('label', {}, 'Stop ', target),
    el('label', {}, 'Name ', name),
    error, submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const values = {
      kind, direction, application, capturePoint,
      selectionKind: form.querySelector('input[name="selection-kind"]:checked')?.value,
      field: field.value, op: op.value, value: value.value, ids: ids.value, target: target.value, name: name.value,
    };
    const built = questionBody(values);
    if (built.error) {
      error.textContent = built.error;
      error.hidden = false;
      return;
    }
    submit.disabled = true;
    const answer = await sendJson(ENDPOINT[kind], built.body);
    submit.disabled = false;
    if (!answer.ok) {
      error.textContent = errorText(answer);
      error.hidden = false;
      return;
    }
    window.location.assign(`/${kind === 'whatif' ? 'whatifs' : 'traces'}/${answer.body.id}/`);
  });
  return form;
}

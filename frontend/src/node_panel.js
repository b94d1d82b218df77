// The application page's side panel: a node's details (details.js describes them), the buttons
// asking a trace or a what-if from a capture point, its zoom button, and its sample records.

import { askForm } from './ask_form.js';
import { capturePointsSection, nodeDetails, sampleSection } from './details.js';
import { el, fetchJson, renderSection } from './dom.js';
import { pageUrlOf } from './pipeline_graph.js';

/** What the panel says while no node is picked. */
export function panelHint() {
  return el('p', { class: 'hint' },
    'Click a node to see its details. Double-click a node to zoom in (show what it holds) or out (collapse it).');
}

/** The buttons asking a trace backward or forward, or a what-if, from a capture point, and the form's slot. */
function askButtons(node, application) {
  const slot = el('div', { class: 'ask-slot' });
  const ask = (kind, direction) => () => slot.replaceChildren(askForm({
    kind, direction, application, capturePoint: node.data('info').capture_id,
  }));
  return [el('div', { class: 'ask-buttons' },
    el('button', { type: 'button', id: 'ask-backward', onclick: ask('trace', 'backward') }, 'Trace backward from here'),
    el('button', { type: 'button', id: 'ask-forward', onclick: ask('trace', 'forward') }, 'Trace forward from here'),
    el('button', { type: 'button', id: 'ask-whatif', onclick: ask('whatif') }, 'What if these were deleted?')), slot];
}

export class NodePanel {
  /** `element`: the panel; `samplesUrl`: the capture points' samples endpoint; `application`: its app id. */
  constructor(element, samplesUrl, application) {
    this.element = element;
    this.samplesUrl = samplesUrl;
    this.application = application;
  }

  clear() {
    delete this.element.dataset.nodeId;
    this.element.replaceChildren(panelHint());
  }

  /** Shows `node`; `tree` is the zoom's nesting, `action` its zoom action (or null) and `onZoom(direction)` does it. */
  show(node, { tree, action, onZoom }) {
    const details = nodeDetails({ id: node.id(), kind: node.data('kind'), label: node.data('title'), data: node.data('info') });
    const parts = [el('h2', {}, details.title), el('div', { class: `kind kind-${details.kind}` }, details.kind)];
    if (node.data('kind') === 'dataset') {
      parts.push(el('a', { href: pageUrlOf(node.id()), class: 'follow-dataset' }, 'Follow it across applications'));
    }
    if (node.data('kind') === 'capture' && !node.data('info')?.not_captured) {  // nothing to trace where it ran plain
      parts.push(...askButtons(node, this.application));
    }
    if (action) {
      parts.push(el('button', {
        type: 'button', class: `zoom-node zoom-${action.direction}`, onclick: () => onZoom(action.direction),
      }, action.text));
    }
    const held = node.data('kind') === 'capture' ? null : capturePointsSection(tree, node.id());
    parts.push(...[...details.sections, ...(held ? [held] : [])].map(renderSection));
    this.element.replaceChildren(...parts);
    this.element.dataset.nodeId = node.id();
    if (node.data('kind') === 'capture') this.showSample(node);
  }

  // The capture point's first records where their values were kept, added once the server answers
  // (if the panel still shows that node).
  async showSample(node) {
    const captureId = node.data('info').capture_id;
    const slot = el('section', { class: 'details-section section-sample-records' }, el('h3', {}, 'Sample records'),
      el('p', { class: 'hint' }, 'Loading…'));
    this.element.append(slot);
    let section;
    try {
      const query = new URLSearchParams({ capture_id: captureId, limit: '10' });
      section = sampleSection(await fetchJson(`${this.samplesUrl}?${query}`));
    } catch (error) {
      section = { heading: 'Sample records', text: `Could not load them: ${error.message}` };
    }
    if (this.element.dataset.nodeId === node.id()) slot.replaceWith(renderSection(section));
  }
}

// The application page's parts before the graph arrives: the toolbar (zoom levels, zoom of a
// selection, fit, find a node, skipped stages, legend), the status line, the graph's frame with
// its minimap, and the side panel.

import { el } from './dom.js';
import { panelHint } from './node_panel.js';
import { LEVELS, LEVEL_NAMES } from './zoom.js';

function renderLegend() {
  const item = (cls, text) => el('li', {}, el('span', { class: `swatch ${cls}` }), text);
  return el('ul', { class: 'legend', 'aria-label': 'Legend' },
    item('swatch-job', 'job'),
    item('swatch-stage', 'stage'),
    item('swatch-operator', 'operator'),
    item('swatch-python', 'Python operator'),
    item('swatch-read', 'dataset read'),
    item('swatch-written', 'dataset written'),
    item('swatch-capture', 'capture point'),
    item('swatch-collapsed', 'collapsed (holds more)'),
    item('swatch-shuffle', 'shuffle'));
}

/** One button per zoom level, and the group holding them. */
function levelControls() {
  const levelButtons = Object.fromEntries(LEVELS.map((level) => [level, el('button', {
    type: 'button', id: `level-${level}`, class: 'level', 'aria-pressed': 'false',
  }, LEVEL_NAMES[level])]));
  const levels = el('div', { class: 'levels', role: 'group', 'aria-label': 'Zoom level' },
    el('span', { class: 'levels-label' }, 'Show:'), Object.values(levelButtons));
  return { levelButtons, levels };
}

/** Zoom of a selection (Shift- or Ctrl-click adds nodes to it): in and out. */
function selectionZoomButtons() {
  return Object.fromEntries(['in', 'out'].map((direction) => [direction, el('button', {
    type: 'button', id: `zoom-selected-${direction}`, disabled: true,
    title: direction === 'in' ? 'Open the selected nodes (Shift-click selects several)'
      : 'Collapse the selected nodes, or the nodes holding them',
  }, direction === 'in' ? 'Zoom in selected' : 'Zoom out selected')]));
}

/** Every drawn node is reachable by keyboard: type its name here, Enter selects and centres it. */
function nodeFinder() {
  const names = el('datalist', { id: 'node-names' });
  const find = el('input', { type: 'search', id: 'find-node', list: 'node-names', placeholder: 'Find a node', 'aria-label': 'Find a node by name' });
  const finder = el('form', { class: 'find-node', role: 'search' }, find, names);
  return { names, find, finder };
}

/** The page's parts, placed in `root`; the graph is drawn into `container`, details into `panel`. */
export function pageParts(root) {
  const header = el('div', { class: 'app-header-slot' });
  const banner = el('div', { class: 'lineage-banner-slot' });
  const status = el('p', { class: 'graph-status', 'aria-live': 'polite' }, 'Loading the lineage graph…');
  const container = el('div', { id: 'graph', class: 'graph', role: 'img', 'aria-label': 'Lineage graph' });
  const panel = el('aside', { id: 'details', class: 'details', 'aria-live': 'polite' }, panelHint());
  const { levelButtons, levels } = levelControls();
  const fit = el('button', { type: 'button', id: 'fit' }, 'Fit');
  const zoomSelected = selectionZoomButtons();
  // Skipped stages (Spark reused their shuffle output) never ran: hidden unless asked for.
  const showSkipped = el('input', { type: 'checkbox', id: 'show-skipped' });
  const showSkippedLabel = el('label', { class: 'toggle', for: 'show-skipped' }, showSkipped, 'Show skipped stages');
  const { names, find, finder } = nodeFinder();
  const toolbar = el('div', { class: 'toolbar' }, levels, zoomSelected.in, zoomSelected.out, fit, finder,
    showSkippedLabel, renderLegend());
  // The minimap (cytoscape-navigator): the whole graph in the corner, the view as a box to drag.
  const minimap = el('div', { id: 'minimap', class: 'cytoscape-navigator minimap', 'aria-hidden': 'true' });
  const frame = el('div', { class: 'graph-frame' }, container, minimap);
  root.replaceChildren(header, banner, toolbar, status, el('div', { class: 'graph-layout' }, frame, panel));
  return {
    root, header, banner, status, container, panel, levelButtons, fit, zoomSelected, showSkipped, showSkippedLabel,
    names, find, finder,
  };
}

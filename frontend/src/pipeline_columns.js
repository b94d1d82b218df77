// The pipeline page's column mode: datasets open into their columns, edges from input to output
// columns coloured by kind; picking a column highlights what it comes from and what is written from
// it, `reach` edges deep, and offers its impact (everything downstream) as a CSV download. Each
// dataset can be collapsed to one node (its columns' edges merged into its own) and expanded
// again: from its panel, or by double-clicking it.

import {
  collapseDatasets, columnLayout, columnUrlOf, COMPOUND_UP_TO, EDGE_KINDS, impactUrlOf, kindClass, placed, reach, toElements,
} from './column_graph.js';
import { el, fetchJson } from './dom.js';
import { formatCount } from './format.js';
import { frameReadable } from './layout.js';
import { columnGraphStyle, graphStyle } from './style.js';


/** The legend of edge kinds and the highlight depth control, shown in column mode only. */
function columnTools(reachInput) {
  const item = (kind) => el('li', {}, el('span', { class: `swatch swatch-kind ${kindClass(kind)}` }),
    kind.toLowerCase().replace('_', ' '));
  return el('div', { class: 'column-tools', id: 'column-tools' },
    el('label', { for: 'reach-depth' }, 'Highlight depth'), reachInput,
    el('ul', { class: 'legend', 'aria-label': 'Edge kinds' }, EDGE_KINDS.map(item)));
}

/**
 * Column mode over `cy`: `load(graphUrl, params)` fetches and draws the column graph; `leave()`
 * gives the stylesheet back. Taps go to `pick(node, double)`: a column is highlighted, a dataset
 * shown (and collapsed or expanded when double-clicked).
 */
export function columnMode(cy, { root, status, panel, toolsSlot }) {
  const reachInput = el('input', { type: 'number', id: 'reach-depth', name: 'reach', min: 1, max: 10, step: 1, value: 2 });
  const tools = columnTools(reachInput);
  let answer = null;
  let picked = null;
  const collapsed = new Set(); // dataset node ids drawn as one node each
  const drawn = () => collapseDatasets(answer, collapsed);

  function classify() {
    const elements = toElements(drawn(), { picked, depth: Number(reachInput.value) || 1 });
    cy.batch(() => {
      for (const element of elements) cy.getElementById(element.data.id).classes(element.classes);
    });
  }

  function showColumn(node) {
    const info = node.data('info') ?? {};
    const depth = Number(reachInput.value) || 1;
    const reached = reach(drawn(), node.id(), depth);
    const columns = (ids) => [...ids].filter((id) => id.startsWith('column:')).length;
    const href = impactUrlOf(node.id(), depth);
    panel.replaceChildren(
      el('h2', {}, info.column ?? node.data('label')),
      el('div', { class: 'kind kind-column' }, 'column'),
      el('p', {}, 'of ', el('code', {}, info.path ?? '')),
      el('p', { class: 'reach' }, `${formatCount(columns(reached.up))} column(s) upstream · `
        + `${formatCount(columns(reached.down))} downstream, within ${depth} edge(s)`),
      href ? el('p', {}, el('a', { href, id: 'impact-csv', download: '' }, 'Download its impact (CSV)')) : null,
    );
    panel.dataset.nodeId = node.id();
  }

  function showDataset(id) {
    const node = cy.getElementById(id);
    const folded = collapsed.has(id);
    panel.replaceChildren(el('h2', {}, node.data('title')), el('div', { class: 'kind kind-dataset' }, 'dataset'),
      el('p', {}, el('button', { type: 'button', id: 'toggle-columns', onclick: () => toggle(id) },
        folded ? `Show its ${node.data('collapsed')} column(s)` : 'Collapse into one node')),
      el('p', { class: 'hint' }, 'Double-click a dataset to collapse or expand it.'));
    panel.dataset.nodeId = id;
  }

  /** Collapses the dataset `id` into one node, or expands it again, and draws the graph anew. */
  function toggle(id) {
    if (collapsed.has(id)) collapsed.delete(id);
    else collapsed.add(id);
    draw();
    showDataset(id);
  }

  function pick(node, double = false) {
    if (node.data('kind') !== 'column') {
      picked = null;
      if (double) toggle(node.id());
      else {
        classify();
        showDataset(node.id());
      }
      return;
    }
    picked = node.id();
    classify();
    showColumn(node);
  }

  reachInput.addEventListener('change', () => {
    if (!picked || !reachInput.checkValidity()) return;
    classify();
    showColumn(cy.getElementById(picked));
  });

  async function load(graphUrl, params) {
    const started = performance.now();
    const asked = fetchJson(`${columnUrlOf(graphUrl)}?${params}`);
    // while the answer is on its way (the page preloads it): the tools move the graph down
    // (Cytoscape must measure its container again, or taps miss) and the stylesheet is parsed
    toolsSlot.replaceChildren(tools);
    cy.resize();
    cy.style(columnGraphStyle());
    answer = await asked;
    const fetched = performance.now();
    collapsed.clear();
    draw({ started, fetched });
    panel.replaceChildren(el('p', { class: 'hint' }, 'Click a column to highlight where it comes from and where it goes.'));
  }

  /** Draws the answer with the collapsed datasets as one node each (`fetch`: when its fetch began and ended). */
  function draw(fetch = null) {
    const fetched = fetch?.fetched ?? performance.now();
    picked = null;
    root.dataset.layout = 'running';
    const elements = toElements(drawn());
    const built = performance.now();
    const layout = columnLayout(elements);
    const laidOut = performance.now();
    cy.batch(() => {
      cy.elements().remove();
      cy.add(placed(elements, layout, { flat: layout.positions.size > COMPOUND_UP_TO }));
    });
    const added = performance.now();
    frameReadable(cy, { box: layout.box }); // the box from the layout: asking Cytoscape computes every node's style first
    // the split of the last drawing, for bench/column_graph.py
    window.lineageColumnDraw = {
      fetch: fetch ? fetch.fetched - fetch.started : 0, elements: built - fetched, layout: laidOut - built, add: added - laidOut,
      view: performance.now() - added,
    };
    const columns = answer.nodes.filter((n) => n.kind === 'column').length;
    const datasets = answer.nodes.length - columns;
    status.textContent = `${formatCount(columns)} column${columns === 1 ? '' : 's'} of ${formatCount(datasets)} dataset${datasets === 1 ? '' : 's'}`
      + ` · ${formatCount(answer.edges.length)} edges`
      + (collapsed.size ? ` · ${formatCount(collapsed.size)} collapsed` : '')
      + (answer.truncated ? ' · stopped at the column limit: lower the depth' : '');
    status.classList.toggle('truncated', Boolean(answer.truncated));
    requestAnimationFrame(() => requestAnimationFrame(() => { root.dataset.layout = 'idle'; }));
  }

  function leave() {
    toolsSlot.replaceChildren();
    cy.resize();
    cy.style(graphStyle());
  }

  return { load, leave, pick };
}

// The application page: the lineage graph (Cytoscape + dagre + expand-collapse) and a side panel.

import cytoscape from 'cytoscape';
import dagre from 'cytoscape-dagre';
import expandCollapse from 'cytoscape-expand-collapse';

import { INCOMPLETE, incompleteLineageLines } from './completeness.js';
import { nodeDetails } from './details.js';
import { el, fetchJson, statusBadge } from './dom.js';
import { formatDuration, formatTime } from './format.js';
import {
  countElements, countSkippedStages, layoutOptions, readableViewport, summaryLine, toElements,
} from './graph.js';
import { graphStyle } from './style.js';

cytoscape.use(dagre);
expandCollapse(cytoscape);

function renderHeader(app) {
  if (!app) return el('div');
  const facts = [
    ['User', app.user || '—'],
    ['Started', formatTime(app.started_at)],
    ['Duration', formatDuration(app.duration_ms)],
    ['Jobs', app.failed_job_count ? `${app.job_count} (${app.failed_job_count} failed)` : String(app.job_count ?? '—')],
    ['Stages', String(app.stage_count ?? '—')],
    ['Spark', [app.spark_version, app.master].filter(Boolean).join(' · ') || '—'],
  ];
  return el('div', { class: 'app-header' },
    el('h1', {}, app.name || app.app_id, ' ', statusBadge(app.status)),
    el('div', { class: 'app-id' }, app.app_id),
    el('dl', { class: 'facts' }, facts.map(([term, value]) => [el('dt', {}, term), el('dd', {}, value)])));
}

// Not colour alone: a warning sign, a bold title and a sentence per capture point, in a bordered box.
function renderLineageBanner(lines) {
  const line = (text) => el('p', {},
    el('span', { class: 'banner-icon', 'aria-hidden': 'true' }, '⚠'), ' ',
    text.startsWith(INCOMPLETE) ? [el('strong', {}, INCOMPLETE), text.slice(INCOMPLETE.length)] : text);
  return el('div', { id: 'lineage-incomplete', class: 'lineage-banner', role: 'alert' }, lines.map(line));
}

/** The banner's lines: the application's incomplete capture points, fetched only when it has some. */
async function incompleteLineage(application, capturePointsUrl) {
  if (!application || application.lineage_complete !== false) return [];
  let points = [];
  try {
    points = await fetchJson(`${capturePointsUrl}?lineage_complete=false&page_size=500`);
  } catch {
    // The banner still says how many tables are missing, without naming the capture points.
  }
  return incompleteLineageLines(application, points);
}

function renderSection(section) {
  const parts = [el('h3', {}, section.heading)];
  if (section.rows) {
    parts.push(el('table', { class: 'kv' }, el('tbody', {},
      section.rows.map(([label, value]) => el('tr', {}, el('th', { scope: 'row' }, label), el('td', {}, String(value)))))));
  }
  if (section.table) {
    parts.push(el('table', { class: 'grid' },
      el('thead', {}, el('tr', {}, section.columns.map((c) => el('th', { scope: 'col' }, c)))),
      el('tbody', {}, section.table.map((row) => el('tr', {}, row.map((cell) => el('td', {}, cell)))))));
  }
  if (section.text) parts.push(el('pre', {}, section.text));
  return el('section', { class: `details-section section-${section.heading.toLowerCase().replace(/\W+/g, '-')}` }, parts);
}

function renderLegend() {
  const item = (cls, text) => el('li', {}, el('span', { class: `swatch ${cls}` }), text);
  return el('ul', { class: 'legend', 'aria-label': 'Legend' },
    item('swatch-stage', 'stage'),
    item('swatch-operator', 'operator'),
    item('swatch-python', 'Python operator'),
    item('swatch-read', 'dataset read'),
    item('swatch-written', 'dataset written'),
    item('swatch-shuffle', 'shuffle'));
}

/** Mount the graph page on `root` (an element with data-graph-url and data-capture-points-url). */
export async function mountApplicationPage(root) {
  const header = el('div', { class: 'app-header-slot' });
  const banner = el('div', { class: 'lineage-banner-slot' });
  const status = el('p', { class: 'graph-status', 'aria-live': 'polite' }, 'Loading the lineage graph…');
  const container = el('div', { id: 'graph', class: 'graph', role: 'img', 'aria-label': 'Lineage graph' });
  const hint = () => el('p', { class: 'hint' }, 'Click a node to see its details. Double-click a stage to collapse or expand it.');
  const panel = el('aside', { id: 'details', class: 'details', 'aria-live': 'polite' }, hint());
  const collapseAll = el('button', { type: 'button', id: 'collapse-all' }, 'Collapse all stages');
  const expandAll = el('button', { type: 'button', id: 'expand-all' }, 'Expand all stages');
  const fit = el('button', { type: 'button', id: 'fit' }, 'Fit');
  // Skipped stages (Spark reused their shuffle output) never ran: hidden unless asked for.
  const showSkipped = el('input', { type: 'checkbox', id: 'show-skipped' });
  const showSkippedLabel = el('label', { class: 'toggle', for: 'show-skipped' }, showSkipped, 'Show skipped stages');
  const toolbar = el('div', { class: 'toolbar' }, collapseAll, expandAll, fit, showSkippedLabel, renderLegend());
  root.replaceChildren(header, banner, toolbar, status, el('div', { class: 'graph-layout' }, container, panel));
  root.dataset.state = 'loading';

  let graph;
  try {
    graph = await fetchJson(root.dataset.graphUrl);
  } catch (error) {
    status.textContent = `Could not load the graph: ${error.message}`;
    root.dataset.state = 'error';
    return null;
  }
  header.replaceChildren(renderHeader(graph.application));
  const incomplete = await incompleteLineage(graph.application, root.dataset.capturePointsUrl);
  if (incomplete.length) banner.replaceChildren(renderLineageBanner(incomplete));
  if (graph.application?.name) document.title = `${graph.application.name} · Spark lineage`;

  const skipped = countSkippedStages(graph);
  if (!skipped) {
    showSkipped.disabled = true;
    showSkippedLabel.title = 'This application has no skipped stages.';
  }
  const hasLineage = (graph.nodes ?? []).length > 0;
  const buildElements = () => {
    const elements = toElements(graph, { showSkipped: showSkipped.checked });
    status.textContent = hasLineage
      ? summaryLine(countElements(elements), { skipped, hidden: !showSkipped.checked })
      : 'No lineage was captured for this application yet.';
    return elements;
  };
  const elements = buildElements();

  const cy = cytoscape({
    container,
    elements,
    style: graphStyle(),
    minZoom: 0.1,
    maxZoom: 3,
  });
  // data-layout is "running" from a layout's start until the view has settled, then "idle".
  const showReadable = (animate) => {
    const view = readableViewport(cy.elements().boundingBox(), cy.width(), cy.height());
    const settled = () => { root.dataset.layout = 'idle'; };
    if (animate) cy.animate(view, { duration: 200, complete: settled });
    else {
      cy.viewport(view);
      settled();
    }
  };
  cy.layout(layoutOptions()).run();
  showReadable(false);
  // Collapsing and expanding re-run the layout (animated); then frame the new graph.
  cy.on('layoutstart', () => { root.dataset.layout = 'running'; });
  cy.on('layoutstop', () => showReadable(true));
  const expander = cy.expandCollapse({
    layoutBy: layoutOptions({ animate: true }),
    fisheye: false,
    animate: false,
    undoable: false,
    cueEnabled: true,
    expandCollapseCuePosition: 'top-left',
    expandCollapseCueSize: 12,
  });

  let selectedId = null;

  function showDetails(node) {
    selectedId = node.id();
    const details = nodeDetails({ id: node.id(), kind: node.data('kind'), label: node.data('title'), data: node.data('info') });
    const parts = [el('h2', {}, details.title), el('div', { class: `kind kind-${details.kind}` }, details.kind)];
    if (details.kind === 'stage') {
      const collapsed = expander.isExpandable(node);
      parts.push(el('button', {
        type: 'button',
        class: 'toggle-stage',
        onclick: () => toggleStage(node),
      }, collapsed ? 'Expand stage (show operators)' : 'Collapse stage (hide operators)'));
    }
    parts.push(...details.sections.map(renderSection));
    panel.replaceChildren(...parts);
    panel.dataset.nodeId = node.id();
  }

  function toggleStage(node) {
    if (expander.isExpandable(node)) expander.expand(node);
    else if (expander.isCollapsible(node)) expander.collapse(node);
  }

  cy.on('tap', 'node', (event) => showDetails(event.target));
  // A click on the cue right after a click on the stage also reads as a double tap: the cue has
  // already toggled the stage then, and toggling again would undo it.
  let lastToggleAt = 0;
  cy.on('expandcollapse.aftercollapse expandcollapse.afterexpand', () => { lastToggleAt = Date.now(); });
  cy.on('dbltap', 'node.stage', (event) => {
    if (Date.now() - lastToggleAt > 500) toggleStage(event.target);
  });
  cy.on('tap', (event) => {
    if (event.target === cy) {
      selectedId = null;
      delete panel.dataset.nodeId;
    }
  });
  // Collapsing or expanding replaces what the panel describes: redraw it for the same node.
  cy.on('expandcollapse.aftercollapse expandcollapse.afterexpand', (event) => {
    if (selectedId === event.target.id()) showDetails(event.target);
  });
  // Showing or hiding skipped stages rebuilds the graph (stages collapsed stay collapsed) and lays it out again.
  showSkipped.addEventListener('change', () => {
    const collapsed = cy.nodes('.cy-expand-collapse-collapsed-node').map((node) => node.id());
    cy.batch(() => {
      cy.elements().remove();
      cy.add(buildElements());
    });
    const again = cy.nodes().filter((node) => collapsed.includes(node.id()));
    if (again.nonempty()) expander.collapse(again, { layoutBy: null });
    if (selectedId !== null && cy.getElementById(selectedId).nonempty()) showDetails(cy.getElementById(selectedId));
    else {
      selectedId = null;
      delete panel.dataset.nodeId;
      panel.replaceChildren(hint());
    }
    cy.layout(layoutOptions()).run();
  });
  collapseAll.addEventListener('click', () => expander.collapseAll());
  expandAll.addEventListener('click', () => expander.expandAll());
  fit.addEventListener('click', () => cy.animate({ fit: { padding: 24 } }, { duration: 200 }));

  window.lineageGraph = cy;
  window.lineageExpandCollapse = expander;
  root.dataset.state = 'ready';
  return cy;
}

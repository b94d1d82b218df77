// The application page: the lineage graph at zoom levels (Cytoscape + dagre, zoom.js) and a side panel.

import cytoscape from 'cytoscape';
import dagre from 'cytoscape-dagre';
import navigator from 'cytoscape-navigator';

import { askForm } from './ask_form.js';
import { INCOMPLETE, incompleteLineageLines } from './completeness.js';
import { capturePointsSection, nodeDetails, sampleSection } from './details.js';
import { el, errorText, fetchJson, renderSection, sendJson, statusBadge } from './dom.js';
import { formatDuration, formatTime } from './format.js';
import {
  READABLE_ZOOM, countSkippedStages, summaryLine, syncElements, toElements, withoutSkipped,
} from './graph.js';
import { pageUrlOf } from './pipeline_graph.js';
import { fitsReadable, focusJob, focusedOpening, openingLevels, openingViewport } from './framing.js';
import {
  drawnBox, expandInPlace, leafPositions, nodeBoxes, restorePositions, runLayout,
} from './layout.js';
import { keepLayout, layoutKey, readLayout } from './layout_cache.js';
import { graphStyle } from './style.js';
import { onNodeTap, onSelectionChange } from './taps.js';
import {
  LEVELS, LEVEL_NAMES, MAX_DRAWN, drawnCount, isCompound, levelState, stateFromUrl, stateToUrl, visibleGraph, zoomIn,
  zoomOut, zoomQuery, zoomSelection, zoomTree,
} from './zoom.js';

cytoscape.use(dagre);
navigator(cytoscape);

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
    el('div', { class: 'app-id' }, app.app_id, ' · ',
      el('a', { href: pageUrlOf(`app:${app.app_id}`), class: 'pipeline-link' }, 'its datasets across applications')),
    el('dl', { class: 'facts' }, facts.map(([term, value]) => [el('dt', {}, term), el('dd', {}, value)])),
    compareButton(app));
}

/** "Compare with the previous run": asks a diff against the previous run of the same job and opens it. */
function compareButton(app) {
  const said = el('span', { class: 'compare-error', role: 'alert' });
  const compare = async () => {
    const asked = await sendJson('/api/v1/diffs/', { application: app.app_id });
    if (asked.ok) window.location.assign(`/diffs/${asked.body.id}/`);
    else said.textContent = errorText(asked);
  };
  return el('div', { class: 'compare' },
    el('button', { type: 'button', id: 'compare-previous', onclick: compare }, 'Compare with the previous run'), ' ', said);
}

// Not colour alone: a warning sign, a bold title and a sentence per capture point, in a bordered box.
function renderLineageBanner(lines) {
  const line = (text) => el('p', {},
    el('span', { class: 'banner-icon', 'aria-hidden': 'true' }, '⚠'), ' ',
    text.startsWith(INCOMPLETE) ? [el('strong', {}, INCOMPLETE), text.slice(INCOMPLETE.length)] : text);
  return el('div', { id: 'lineage-incomplete', class: 'lineage-banner', role: 'alert' }, lines.map(line));
}

/** The browser's localStorage, or null where it is refused (layout_cache then keeps nothing). */
function browserStorage() {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
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

const MINIMAP_DELAY_MS = 250;
// Zoom states whose layout is kept for going back to them (application page).
const LAYOUTS_KEPT = 24;

/** Counts of the application's stages, operators and datasets, whatever the zoom. */
function kindCounts(graph) {
  const counts = { stage: 0, operator: 0, dataset: 0 };
  for (const node of graph.nodes ?? []) if (node?.kind in counts) counts[node.kind] += 1;
  return counts;
}

/** The zoom state of the page's URL: ?level=stage&in=<id>&out=<id> (repeated), see zoom.stateToUrl. */
function urlZoom() {
  const params = new URLSearchParams(window.location.search);
  return { level: params.get('level'), in: params.getAll('in'), out: params.getAll('out'), skipped: params.get('skipped') === '1' };
}

function writeUrlZoom(tree, level, collapsed, skipped) {
  const query = zoomQuery(window.location.search, stateToUrl(tree, level, collapsed), skipped);
  window.history.replaceState(null, '', `${window.location.pathname}?${query}`);
}

/** Mount the graph page on `root` (an element with data-graph-url and data-capture-points-url). */
export async function mountApplicationPage(root) {
  const samplesUrl = `${root.dataset.capturePointsUrl}sample/`;
  const header = el('div', { class: 'app-header-slot' });
  const banner = el('div', { class: 'lineage-banner-slot' });
  const status = el('p', { class: 'graph-status', 'aria-live': 'polite' }, 'Loading the lineage graph…');
  const container = el('div', { id: 'graph', class: 'graph', role: 'img', 'aria-label': 'Lineage graph' });
  const hint = () => el('p', { class: 'hint' },
    'Click a node to see its details. Double-click a node to zoom in (show what it holds) or out (collapse it).');
  const panel = el('aside', { id: 'details', class: 'details', 'aria-live': 'polite' }, hint());
  const levelButtons = Object.fromEntries(LEVELS.map((level) => [level, el('button', {
    type: 'button', id: `level-${level}`, class: 'level', 'aria-pressed': 'false',
  }, LEVEL_NAMES[level])]));
  const levels = el('div', { class: 'levels', role: 'group', 'aria-label': 'Zoom level' },
    el('span', { class: 'levels-label' }, 'Show:'), Object.values(levelButtons));
  const fit = el('button', { type: 'button', id: 'fit' }, 'Fit');
  // Zoom of a selection (Shift- or Ctrl-click adds nodes to it).
  const zoomSelected = Object.fromEntries(['in', 'out'].map((direction) => [direction, el('button', {
    type: 'button', id: `zoom-selected-${direction}`, disabled: true,
    title: direction === 'in' ? 'Open the selected nodes (Shift-click selects several)'
      : 'Collapse the selected nodes, or the nodes holding them',
  }, direction === 'in' ? 'Zoom in selected' : 'Zoom out selected')]));
  // Skipped stages (Spark reused their shuffle output) never ran: hidden unless asked for.
  const showSkipped = el('input', { type: 'checkbox', id: 'show-skipped' });
  const showSkippedLabel = el('label', { class: 'toggle', for: 'show-skipped' }, showSkipped, 'Show skipped stages');
  // Every drawn node is reachable by keyboard: type its name here, Enter selects and centres it.
  const names = el('datalist', { id: 'node-names' });
  const find = el('input', { type: 'search', id: 'find-node', list: 'node-names', placeholder: 'Find a node', 'aria-label': 'Find a node by name' });
  const finder = el('form', { class: 'find-node', role: 'search' }, find, names);
  const toolbar = el('div', { class: 'toolbar' }, levels, zoomSelected.in, zoomSelected.out, fit, finder,
    showSkippedLabel, renderLegend());
  // The minimap (cytoscape-navigator): the whole graph in the corner, the view as a box to drag.
  const minimap = el('div', { id: 'minimap', class: 'cytoscape-navigator minimap', 'aria-hidden': 'true' });
  const frame = el('div', { class: 'graph-frame' }, container, minimap);
  root.replaceChildren(header, banner, toolbar, status, el('div', { class: 'graph-layout' }, frame, panel));
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
  const hasLineage = (graph.nodes ?? []).some((node) => node?.kind !== 'application');
  const fromUrl = urlZoom();
  showSkipped.checked = Boolean(skipped) && fromUrl.skipped;

  // The zoom: the graph drawn (skipped stages left out unless asked for), its nesting, the level
  // last chosen and the collapsed nodes. Every change redraws from these (zoom.visibleGraph).
  let base = showSkipped.checked ? graph : withoutSkipped(graph);
  let tree = zoomTree(base);
  // Nodes each level draws (0: the level has no node), for the level buttons.
  const sizesOf = (t) => new Map(LEVELS.map((name) => [name,
    [...t.nodes.values()].some((node) => node.kind === name) ? drawnCount(t, levelState(t, name)) : 0]));
  let levelSizes = sizesOf(tree);
  let { level, collapsed } = stateFromUrl(tree, fromUrl);
  const levelChosen = fromUrl.level !== null && level === fromUrl.level;

  const cy = cytoscape({ container, style: graphStyle(), minZoom: 0.05, maxZoom: 3 });
  let selectedId = null;


  const storage = browserStorage();

  // How long the last draw took, by step (ms): read by bench/browser_graph.py.
  let lastDraw = {};

  // Each zoom state's layout, so that going back to a state draws it as it was, without laying it
  // out again (the last LAYOUTS_KEPT states; forgotten when the drawn graph changes).
  const layouts = new Map();
  const stateKey = () => [...collapsed].sort().join('\n');

  // The job framed when the whole graph does not fit the view (framing.focusJob).
  const framedJob = focusJob(tree);

  // Redraws the current zoom state. `focus` (a zoom of one node: {id, before, box}) keeps the
  // rest of the graph in place (layout.expandInPlace) and the view on that node; else the view
  // shows the whole graph, or the framed job when the whole is too big to read
  // (framing.openingViewport). Returns the box of what is drawn.
  function draw(focus = null) {
    root.dataset.layout = 'running';
    const t0 = performance.now();
    const elements = toElements(visibleGraph(base, collapsed, tree));
    const t1 = performance.now();
    cy.batch(() => syncElements(cy, elements));
    const t2 = performance.now();
    const key = stateKey();
    const kept = layouts.get(key);
    let how;
    let stored = null;
    const storedKey = layoutKey(elements);
    if (kept && restorePositions(cy, kept.positions)) how = 'kept';
    else if (focus?.box && expandInPlace(cy, focus.before, focus.box)) how = 'in place';
    else if ((stored = readLayout(storage, storedKey)) && restorePositions(cy, stored.positions)) {
      how = 'stored'; // laid out in this browser before (an earlier visit): nothing measured again
    } else how = runLayout(cy); // synchronous: done when it returns
    const t3 = performance.now();
    let box = how === 'kept' ? kept.box : how === 'stored' ? stored.box : null;
    if (focus && cy.getElementById(focus.id).nonempty()) centreOn(cy.getElementById(focus.id));
    else {
      box = box ?? drawnBox(cy);
      const job = framedJob === null ? null
        : (how === 'stored' ? stored.job : nodeBoxes(cy, [framedJob]).get(framedJob)) ?? null;
      cy.viewport(openingViewport(box, job, cy.width(), cy.height()));
      if (how === 'flat' || how === 'compound') keepLayout(storage, storedKey, leafPositions(cy), { box, job });
    }
    layouts.delete(key);
    // positions only (the widths are measured when zooming), and the box once measured
    layouts.set(key, { positions: how === 'kept' ? kept.positions : leafPositions(cy), box: box ?? kept?.box ?? null });
    if (layouts.size > LAYOUTS_KEPT) layouts.delete(layouts.keys().next().value);
    lastDraw = { elements: t1 - t0, add: t2 - t1, layout: t3 - t2, view: performance.now() - t3, nodes: cy.nodes().length, how };
    for (const [name, button] of Object.entries(levelButtons)) {
      button.setAttribute('aria-pressed', String(name === level));
      const size = levelSizes.get(name);
      button.disabled = size === 0 || size > MAX_DRAWN;
      button.title = size > MAX_DRAWN
        ? `${size} nodes at this level: too many to draw at once; zoom into the nodes you need`
        : '';
    }
    status.textContent = hasLineage
      ? `${summaryLine(kindCounts(base), { skipped, hidden: !showSkipped.checked })} · showing ${LEVEL_NAMES[level].toLowerCase()}`
      : 'No lineage was captured for this application yet.';
    writeUrlZoom(tree, level, collapsed, showSkipped.checked);
    names.replaceChildren(...cy.nodes().map((node) => el('option', { value: node.data('title') })));
    lastDraw.total = performance.now() - t0;
    if (selectedId !== null && cy.getElementById(selectedId).nonempty()) {
      cy.getElementById(selectedId).select();
      showDetails(cy.getElementById(selectedId));
    } else {
      selectedId = null;
      delete panel.dataset.nodeId;
      panel.replaceChildren(hint());
    }
    // idle once the new graph is drawn: clicks hit what is on the screen from then on
    requestAnimationFrame(() => requestAnimationFrame(() => { root.dataset.layout = 'idle'; }));
    return box ?? drawnBox(cy);
  }

  // The page opens (without a level in its URL) at the deepest level whose whole graph fits the
  // view readably, trying levels up to the stages (framing.openingLevels); the last one tried
  // stays, framed on its job. A graph whose stages are more than the view reads opens on the
  // framed job's stages, the other jobs collapsed (framing.focusedOpening).
  function open() {
    const focused = focusedOpening(tree, framedJob, cy.width(), cy.height());
    if (focused) {
      ({ level, collapsed } = focused);
      draw();
      return;
    }
    const candidates = openingLevels(tree);
    for (const [i, candidate] of candidates.entries()) {
      level = candidate;
      collapsed = levelState(tree, candidate);
      const box = draw();
      if (i === candidates.length - 1 || fitsReadable(box, cy.width(), cy.height())) return;
    }
  }

  // ZoomIn on a collapsed node shows what it holds; ZoomOut collapses a compound node, or the
  // node holding a leaf. The selection follows to the node drawn in its place.
  function zoom(node, direction) {
    const id = node.id();
    const drawn = cy.getElementById(id);
    const focus = { id, before: leafPositions(cy, { widths: true }), box: drawn.nonempty() ? drawn.boundingBox({ includeLabels: false }) : null };
    if (direction === 'in') collapsed = zoomIn(collapsed, id);
    else {
      const target = isCompound(tree, id) ? id : tree.parentOf.get(id);
      if (target === undefined) return;
      collapsed = zoomOut(tree, collapsed, target);
      selectedId = target;
      focus.id = target;
      focus.box = null; // collapsing: the state it came from is kept, else a full layout
    }
    draw(focus);
  }

  // Pans (and zooms up to a readable size, never down) so that `node` is in the middle of the view.
  function centreOn(node) {
    const zoomLevel = Math.max(cy.zoom(), READABLE_ZOOM);
    const { x, y } = node.position();
    cy.viewport({ zoom: zoomLevel, pan: { x: cy.width() / 2 - x * zoomLevel, y: cy.height() / 2 - y * zoomLevel } });
  }

  function zoomAction(node) {
    const id = node.id();
    if (collapsed.has(id)) return { direction: 'in', text: `Zoom in (show its ${node.data('kind') === 'job' ? 'stages' : 'contents'})` };
    if (isCompound(tree, id)) return { direction: 'out', text: `Zoom out (collapse this ${node.data('kind')})` };
    const parent = tree.parentOf.get(id);
    if (parent !== undefined) return { direction: 'out', text: `Zoom out (collapse its ${tree.nodes.get(parent).kind})` };
    return null;
  }

  function showDetails(node) {
    selectedId = node.id();
    const details = nodeDetails({ id: node.id(), kind: node.data('kind'), label: node.data('title'), data: node.data('info') });
    const parts = [el('h2', {}, details.title), el('div', { class: `kind kind-${details.kind}` }, details.kind)];
    if (node.data('kind') === 'dataset') {
      parts.push(el('a', { href: pageUrlOf(node.id()), class: 'follow-dataset' }, 'Follow it across applications'));
    }
    if (node.data('kind') === 'capture' && !node.data('info')?.not_captured) {  // nothing to trace where it ran plain
      const slot = el('div', { class: 'ask-slot' });
      const ask = (kind, direction) => () => slot.replaceChildren(askForm({
        kind, direction, application: graph.application?.app_id, capturePoint: node.data('info').capture_id,
      }));
      parts.push(el('div', { class: 'ask-buttons' },
        el('button', { type: 'button', id: 'ask-backward', onclick: ask('trace', 'backward') }, 'Trace backward from here'),
        el('button', { type: 'button', id: 'ask-forward', onclick: ask('trace', 'forward') }, 'Trace forward from here'),
        el('button', { type: 'button', id: 'ask-whatif', onclick: ask('whatif') }, 'What if these were deleted?')), slot);
    }
    const action = zoomAction(node);
    if (action) {
      parts.push(el('button', {
        type: 'button', class: `zoom-node zoom-${action.direction}`, onclick: () => zoom(node, action.direction),
      }, action.text));
    }
    const held = node.data('kind') === 'capture' ? null : capturePointsSection(tree, node.id());
    parts.push(...[...details.sections, ...(held ? [held] : [])].map(renderSection));
    panel.replaceChildren(...parts);
    panel.dataset.nodeId = node.id();
    if (node.data('kind') === 'capture') showSample(node);
  }

  // The capture point's first records where their values were kept, added once the server answers
  // (if the panel still shows that node).
  async function showSample(node) {
    const captureId = node.data('info').capture_id;
    const slot = el('section', { class: 'details-section section-sample-records' }, el('h3', {}, 'Sample records'),
      el('p', { class: 'hint' }, 'Loading…'));
    panel.append(slot);
    let section;
    try {
      const query = new URLSearchParams({ capture_id: captureId, limit: '10' });
      section = sampleSection(await fetchJson(`${samplesUrl}?${query}`));
    } catch (error) {
      section = { heading: 'Sample records', text: `Could not load them: ${error.message}` };
    }
    if (panel.dataset.nodeId === node.id()) slot.replaceWith(renderSection(section));
  }

  onNodeTap(cy, (node, double) => {
    showDetails(node);
    const action = double ? zoomAction(node) : null;
    if (action) zoom(node, action.direction);
  });
  cy.on('tap', (event) => {
    if (event.target === cy) {
      selectedId = null;
      delete panel.dataset.nodeId;
      panel.replaceChildren(hint());
    }
  });
  for (const [name, button] of Object.entries(levelButtons)) {
    button.addEventListener('click', () => {
      level = name;
      collapsed = levelState(tree, name);
      draw();
    });
  }
  // Showing or hiding skipped stages keeps the level and what was zoomed by hand.
  showSkipped.addEventListener('change', () => {
    const url = stateToUrl(tree, level, collapsed);
    base = showSkipped.checked ? graph : withoutSkipped(graph);
    tree = zoomTree(base);
    layouts.clear();
    levelSizes = sizesOf(tree);
    ({ level, collapsed } = stateFromUrl(tree, url));
    draw();
  });
  fit.addEventListener('click', () => cy.animate({ fit: { padding: 24 } }, { duration: 200 }));
  const selectedIds = () => cy.nodes(':selected').map((node) => node.id());
  onSelectionChange(cy, (some) => {
    zoomSelected.in.disabled = !some;
    zoomSelected.out.disabled = !some;
  });
  for (const [direction, button] of Object.entries(zoomSelected)) {
    button.addEventListener('click', () => {
      const next = zoomSelection(tree, collapsed, selectedIds(), direction);
      if (next.size === collapsed.size && [...next].every((id) => collapsed.has(id))) return;
      collapsed = next;
      draw();
    });
  }
  finder.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = find.value.trim().toLowerCase();
    const matches = cy.nodes().filter((node) => String(node.data('title')).toLowerCase().includes(text));
    const node = matches.filter((n) => String(n.data('title')).toLowerCase() === text)[0] ?? matches[0];
    if (!text || !node) {
      find.setCustomValidity('No node drawn here has that name');
      find.reportValidity();
      return;
    }
    find.setCustomValidity('');
    cy.elements().unselect();
    node.select();
    cy.center(node);
    showDetails(node);
    panel.querySelector('button, a')?.focus();
  });
  find.addEventListener('input', () => find.setCustomValidity(''));

  if (levelChosen) draw();
  else open();
  // The minimap is made once the graph is painted: making it measures the whole graph (a quarter
  // of a second for a 500-stage application) and it is not what the page opens on.
  requestAnimationFrame(() => setTimeout(() => {
    const minimapNav = cy.navigator({ container: '#minimap', removeCustomContainer: false, rerenderDelay: 300 });
    // cytoscape-navigator redraws its thumbnail (a full cy.png()) on the *first* render after a
    // change, inside that frame: ~150 ms on every zoom of a 5,000-operator graph. Its handler is
    // moved behind a trailing debounce, so the thumbnail follows once the graph is on screen.
    // (_onRenderHandler is the extension's own field, in the version package-lock.json pins.)
    if (minimapNav?._onRenderHandler) {
      const thumbnail = minimapNav._onRenderHandler;
      let timer = null;
      cy.offRender(thumbnail);
      cy.onRender(() => {
        clearTimeout(timer);
        timer = setTimeout(thumbnail, MINIMAP_DELAY_MS);
      });
    }
  }, 0));
  window.lineageGraph = cy;
  window.lineageZoom = {
    level: () => level,
    lastDraw: () => lastDraw,
    collapsed: () => [...collapsed].sort(),
    zoomIn: (id) => zoom(cy.getElementById(id), 'in'),
    zoomOut: (id) => zoom(cy.getElementById(id), 'out'),
  };
  root.dataset.state = 'ready';
  return cy;
}

// The application page: the lineage graph at zoom levels (Cytoscape + dagre, zoom.js) and a side
// panel. Its pieces: application_toolbar (the page's parts), application_header (the run's facts
// and the incomplete-lineage banner), application_view (the graph drawn at its zoom state),
// node_panel (a node's details), application_events (what taps and clicks do), minimap.

import cytoscape from 'cytoscape';
import dagre from 'cytoscape-dagre';
import navigator from 'cytoscape-navigator';

import { listen } from './application_events.js';
import { incompleteLineage, renderHeader, renderLineageBanner } from './application_header.js';
import { pageParts } from './application_toolbar.js';
import { ApplicationView } from './application_view.js';
import { fetchJson } from './dom.js';
import { countSkippedStages } from './graph.js';
import { startMinimap } from './minimap.js';
import { NodePanel } from './node_panel.js';
import { graphStyle } from './style.js';
import { urlZoom } from './zoom_url.js';

cytoscape.use(dagre);
navigator(cytoscape);

/** The browser's localStorage, or null where it is refused (layout_cache then keeps nothing). */
function browserStorage() {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

/** Shows the run's facts, its incomplete-lineage banner and its name in the title. */
async function showApplication(parts, application, capturePointsUrl) {
  parts.header.replaceChildren(renderHeader(application));
  const incomplete = await incompleteLineage(application, capturePointsUrl);
  if (incomplete.length) parts.banner.replaceChildren(renderLineageBanner(incomplete));
  if (application?.name) document.title = `${application.name} · Spark lineage`;
}

/** The skipped-stages toggle: off where there are none, else as the URL says. Returns how many there are. */
function skippedToggle(parts, graph, fromUrl) {
  const skipped = countSkippedStages(graph);
  if (!skipped) {
    parts.showSkipped.disabled = true;
    parts.showSkippedLabel.title = 'This application has no skipped stages.';
  }
  parts.showSkipped.checked = Boolean(skipped) && fromUrl.skipped;
  return skipped;
}

/** Mount the graph page on `root` (an element with data-graph-url and data-capture-points-url). */
export async function mountApplicationPage(root) {
  const parts = pageParts(root);
  root.dataset.state = 'loading';
  // Made while the graph is on its way (the page preloads it): its stylesheet parsed and canvases
  // laid out before the answer, not after.
  const cy = cytoscape({ container: parts.container, style: graphStyle(), minZoom: 0.05, maxZoom: 3 });
  let graph;
  try {
    graph = await fetchJson(root.dataset.graphUrl);
    performance.mark('lineage:graph-read'); // the answer parsed (bench/browser_graph.py prints when)
  } catch (error) {
    parts.status.textContent = `Could not load the graph: ${error.message}`;
    root.dataset.state = 'error';
    return null;
  }
  await showApplication(parts, graph.application, root.dataset.capturePointsUrl);
  cy.resize(); // the header moved the graph down: taps are placed from the container's new box
  const fromUrl = urlZoom();
  const skipped = skippedToggle(parts, graph, fromUrl);
  const panel = new NodePanel(parts.panel, `${root.dataset.capturePointsUrl}sample/`, graph.application?.app_id);
  const view = new ApplicationView(cy, graph, { parts, panel, storage: browserStorage(), fromUrl, skipped });
  listen(view, parts);
  view.open();
  performance.mark('lineage:graph-drawn'); // handed to Cytoscape, which paints it in the next frame
  startMinimap(cy);
  window.lineageGraph = cy;
  window.lineageZoom = {
    level: () => view.level,
    lastDraw: () => view.lastDraw,
    collapsed: () => [...view.collapsed].sort(),
    zoomIn: (id) => view.zoom(cy.getElementById(id), 'in'),
    zoomOut: (id) => view.zoom(cy.getElementById(id), 'out'),
  };
  root.dataset.state = 'ready';
  return cy;
}

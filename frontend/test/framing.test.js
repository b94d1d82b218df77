// What the graph pages open on: pure functions on fixture data, then the example application
// (the graph `make run` captures) laid out by real Cytoscape and dagre, headless.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import cytoscape from 'cytoscape';
import dagre from 'cytoscape-dagre';

import {
  PATH_MIN_ZOOM, fitZoom, fitsReadable, focusJob, focusedOpening, openingLevels, openingViewport, pathNodes,
  readableNodeCount, unionBox,
} from '../src/framing.js';
import { READABLE_ZOOM, toElements, withoutSkipped } from '../src/graph.js';
import { drawnBox, nodeBoxes, runLayout } from '../src/layout.js';
import { pathGraph, questionZoom } from '../src/question_view.js';
import { graphStyle } from '../src/style.js';
import { drawnCount, levelState, visibleGraph, zoomIn, zoomTree } from '../src/zoom.js';
import { fixture } from './helpers.js';

cytoscape.use(dagre);
const instances = [];
after(() => instances.forEach((cy) => cy.destroy()));

// The graph's view on the pages at 1280x800: the application page's beside its panel, the trace page's.
const APP_VIEW = { width: 873, height: 475 };
const TRACE_VIEW = { width: 1238, height: 478 };

/** Where a model box is drawn in viewport {zoom, pan}. */
const rendered = (box, { zoom, pan }) => ({
  x1: box.x1 * zoom + pan.x, x2: box.x2 * zoom + pan.x, y1: box.y1 * zoom + pan.y, y2: box.y2 * zoom + pan.y,
});
const inside = (box, { width, height }) => box.x1 >= 0 && box.y1 >= 0 && box.x2 <= width && box.y2 <= height;

function laidOut(graph, collapsed, tree) {
  const cy = cytoscape({ headless: true, styleEnabled: true, style: graphStyle(), elements: toElements(visibleGraph(graph, collapsed, tree)) });
  instances.push(cy);
  runLayout(cy);
  return cy;
}

describe('boxes and zooms', () => {
  const boxes = new Map([['a', { x1: 0, y1: 0, x2: 100, y2: 50 }], ['b', { x1: 300, y1: -20, x2: 400, y2: 10 }]]);

  it('joins the boxes of the nodes asked for, skipping those not drawn', () => {
    assert.deepEqual(unionBox(boxes, ['a', 'b', 'gone']), { x1: 0, y1: -20, x2: 400, y2: 50, w: 400, h: 70 });
    assert.equal(unionBox(boxes, ['gone']), null);
  });

  it('tells whether a box reads whole in the view', () => {
    const box = { x1: 0, y1: 0, w: 1000, h: 100 };
    assert.equal(fitZoom(box, 1048, 800), 1);
    assert.equal(fitsReadable(box, 1048, 800), true);
    assert.equal(fitsReadable({ ...box, w: 2000 }, 1048, 800), false, 'half size: labels too small');
    assert.equal(fitsReadable(null, 1048, 800), false);
  });

  it('opens on the whole graph when it reads, else on the focus fitted, its sources in view when longer', () => {
    const whole = { x1: 0, y1: 0, x2: 3000, y2: 400, w: 3000, h: 400 };
    const focus = { x1: 1000, y1: 100, x2: 1500, y2: 200, w: 500, h: 100 };
    const onFocus = openingViewport(whole, focus, 800, 400);
    assert.ok(inside(rendered(focus, onFocus), { width: 800, height: 400 }));
    assert.ok(onFocus.zoom >= READABLE_ZOOM);
    const small = { x1: 0, y1: 0, x2: 500, y2: 200, w: 500, h: 200 };
    assert.ok(inside(rendered(small, openingViewport(small, focus, 800, 400)), { width: 800, height: 400 }), 'the whole, when it fits');
    const long = { x1: 0, y1: 0, x2: 4000, y2: 100, w: 4000, h: 100 };
    const onLong = openingViewport(whole, long, 800, 400, { minZoom: 0.5 });
    assert.equal(onLong.zoom, 0.5);
    assert.ok(rendered(long, onLong).x1 > 0, 'the left end (the sources) is in view');
  });
});

describe('the application page of the example', () => {
  const graph = withoutSkipped(fixture('example_graph.json'));
  const tree = zoomTree(graph);

  it('tries its levels from the readable one up to the stages', () => {
    assert.deepEqual(openingLevels(tree), ['stage']);
    assert.deepEqual(openingLevels(zoomTree(fixture('zoom_graph.json'))), ['capture', 'operator', 'stage']);
  });

  it('frames the job holding most capture points: the one that saved the counts', () => {
    assert.equal(focusJob(tree), 'job:3');
    assert.equal(focusJob(zoomTree(fixture('zoom_graph.json'))), 'job:0');
    assert.equal(focusJob(zoomTree({ nodes: [{ id: 'application', kind: 'application' }] })), null);
  });

  it('opens on that job whole and readable when the whole application does not fit', () => {
    const cy = laidOut(graph, levelState(tree, 'stage'), tree);
    const whole = drawnBox(cy);
    assert.equal(fitsReadable(whole, APP_VIEW.width, APP_VIEW.height), false, 'eight jobs stacked: too big to read whole');
    const job = nodeBoxes(cy, ['job:3']).get('job:3');
    const view = openingViewport(whole, job, APP_VIEW.width, APP_VIEW.height);
    assert.ok(view.zoom >= READABLE_ZOOM, `zoom ${view.zoom}`);
    const drawn = rendered(job, view);
    assert.ok(drawn.x1 >= 0 && drawn.y1 >= 0 && drawn.y2 <= APP_VIEW.height, JSON.stringify(drawn));
    assert.ok(Math.abs((drawn.y1 + drawn.y2) / 2 - APP_VIEW.height / 2) < 2, 'the job in the middle of the view');
    for (const stage of ['stage:3', 'stage:4', 'stage:5']) {
      const box = rendered(cy.getElementById(stage).boundingBox({ includeLabels: false }), view);
      assert.ok(inside(box, APP_VIEW), `${stage} is on screen`);
    }
  });
});

// bench/browser_graph.py's wide shape, smaller: `jobs` jobs of `stages` chained stages of two
// operators, one dataset read and one written by each job.
function wideApplication(jobs, stages) {
  const nodes = [{ id: 'application', kind: 'application', label: 'wide' }];
  const edges = [];
  for (let j = 0; j < jobs; j += 1) {
    nodes.push({ id: `job:${j}`, kind: 'job', parent: 'application', data: { job_id: j } });
    nodes.push({ id: `dataset:in-${j}`, kind: 'dataset', label: `in-${j}` }, { id: `dataset:out-${j}`, kind: 'dataset', label: `out-${j}` });
    for (let s = j * stages; s < (j + 1) * stages; s += 1) {
      nodes.push({ id: `stage:${s}`, kind: 'stage', parent: `job:${j}`, label: `map at etl.py:${s}` });
      nodes.push({ id: `op:${s}:0`, kind: 'operator', parent: `stage:${s}` }, { id: `op:${s}:1`, kind: 'operator', parent: `stage:${s}` });
      edges.push({ source: `op:${s}:0`, target: `op:${s}:1`, kind: 'narrow' });
      if (s) edges.push({ source: `op:${s - 1}:1`, target: `op:${s}:0`, kind: 'shuffle' });
    }
    edges.push({ source: `dataset:in-${j}`, target: `op:${j * stages}:0`, kind: 'read' });
    edges.push({ source: `op:${(j + 1) * stages - 1}:1`, target: `dataset:out-${j}`, kind: 'write' });
  }
  return { application: {}, nodes, edges };
}

describe('an application whose stages the view cannot read', () => {
  it('reads at most 54 nodes in the application page\'s view at 1280x800: 9 across, 6 down', () => {
    assert.equal(readableNodeCount(APP_VIEW.width, APP_VIEW.height), 54);
    assert.equal(readableNodeCount(2 * APP_VIEW.width, APP_VIEW.height), 2 * 54 + 6, 'a wider view reads more');
    assert.equal(readableNodeCount(40, 40), 0);
  });

  it('opens the example and a few jobs at their stages level, as before', () => {
    const example = zoomTree(withoutSkipped(fixture('example_graph.json')));
    assert.equal(focusedOpening(example, focusJob(example), APP_VIEW.width, APP_VIEW.height), null);
    const few = zoomTree(wideApplication(4, 10)); // 40 stages and 8 datasets: 48 nodes
    assert.equal(focusedOpening(few, focusJob(few), APP_VIEW.width, APP_VIEW.height), null);
    const oneJob = zoomTree(wideApplication(1, 80));
    assert.equal(focusedOpening(oneJob, focusJob(oneJob), APP_VIEW.width, APP_VIEW.height), null, 'no other job to collapse');
  });

  it('opens 500 stages on the last job\'s stages, the other jobs collapsed: a quarter of the nodes', () => {
    const graph = wideApplication(50, 10);
    const tree = zoomTree(graph);
    const opening = focusedOpening(tree, focusJob(tree), APP_VIEW.width, APP_VIEW.height);
    assert.equal(opening.level, 'stage');
    assert.equal(drawnCount(tree, levelState(tree, 'stage')), 651);
    assert.equal(drawnCount(tree, opening.collapsed), 161, '49 jobs, 10 stages, their job, 100 datasets, the application');
    const drawn = visibleGraph(graph, opening.collapsed, tree);
    const kinds = (kind) => drawn.nodes.filter((n) => n.kind === kind);
    assert.deepEqual(kinds('stage').map((n) => n.id), Array.from({ length: 10 }, (_, i) => `stage:${490 + i}`));
    assert.ok(kinds('stage').every((n) => n.collapsed), 'stages, not their operators');
    assert.equal(kinds('job').filter((n) => n.collapsed).length, 49);
    const cy = laidOut(graph, opening.collapsed, tree);
    const job = nodeBoxes(cy, ['job:49']).get('job:49');
    const view = openingViewport(drawnBox(cy), job, APP_VIEW.width, APP_VIEW.height);
    assert.ok(view.zoom >= READABLE_ZOOM, `zoom ${view.zoom}`);
    const shown = cy.nodes('.stage').filter((n) => inside(rendered(n.boundingBox({ includeLabels: false }), view), APP_VIEW));
    assert.ok(shown.length >= 4, `${shown.length} stages on screen`);
    // ZoomIn on another job shows its stages, still collapsed over their operators.
    const opened = visibleGraph(graph, zoomIn(opening.collapsed, 'job:3'), tree);
    const stagesOf3 = opened.nodes.filter((n) => n.parent === 'job:3');
    assert.equal(stagesOf3.length, 10);
    assert.ok(stagesOf3.every((n) => n.kind === 'stage' && n.collapsed));
  });
});

describe('the trace page of the example', () => {
  const app = fixture('example_graph.json');
  const trace = fixture('example_trace_graph.json');

  it('draws the stages the trace crossed with their capture points only, edges lifted to the stage', () => {
    const path = pathGraph(app, trace.points);
    const operators = (g, stage) => g.nodes.filter((n) => n.kind === 'operator' && n.id.startsWith(`op:${stage}:`)).length;
    assert.equal(operators(path, 3), 0);
    assert.equal(operators(path, 11), operators(app, 11), 'a stage off the path keeps its operators');
    const input = path.nodes.find((n) => n.id.endsWith('0001-input-textFile'));
    assert.equal(input.parent, 'stage:3');
    assert.ok(path.edges.some((e) => e.source === 'stage:3' && e.target === 'stage:4' && e.kind === 'shuffle'), 'the shuffle, lifted');
    assert.ok(path.edges.every((e) => e.source !== e.target));
    assert.equal(app.nodes.filter((n) => n.kind === 'operator').length, 46, 'the input is not modified');
    assert.equal(pathGraph(app, []), app);
  });

  it('opens with every capture point it crossed on screen, labels at a size that reads', () => {
    const graph = pathGraph(app, trace.points);
    const tree = zoomTree(graph);
    const collapsed = questionZoom(tree, trace.points);
    const cy = laidOut(graph, collapsed, tree);
    const path = [...pathNodes(tree, collapsed, trace.points, graph.edges)];
    assert.ok(path.includes('stage:3') && path.includes('dataset:3'), 'a stage crossed, and what it wrote');
    const focus = unionBox(nodeBoxes(cy, path), path);
    const view = openingViewport(drawnBox(cy), focus, TRACE_VIEW.width, TRACE_VIEW.height, { minZoom: PATH_MIN_ZOOM });
    assert.ok(view.zoom >= PATH_MIN_ZOOM, `zoom ${view.zoom}`);
    for (const point of trace.points) {
      const node = cy.getElementById(`capture:${point.capture_id}`);
      assert.ok(node.nonempty(), point.capture_id);
      assert.ok(inside(rendered(node.boundingBox({ includeLabels: false }), view), TRACE_VIEW), `${point.capture_id} on screen`);
    }
  });
});

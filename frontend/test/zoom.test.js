import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { countElements, toElements } from '../src/graph.js';
import {
  LEVELS, URL_QUERY_MAX, drawnCount, isCompound, levelState, readableLevel, shownAs, stateFromUrl, stateToUrl,
  visibleGraph, zoomIn, zoomOut, zoomQuery, zoomSelection, zoomTree,
} from '../src/zoom.js';
import { fixture } from './helpers.js';

const ids = (graph) => graph.nodes.map((n) => n.id).sort();
const pairs = (graph) => graph.edges.map((e) => `${e.source}->${e.target}`).sort();

// A synthetic application: `jobs` jobs of `stages` stages of `ops` operators, each operator holding
// one capture point, operators chained inside a stage, stages chained by shuffles, one dataset read
// by the first operator and one written by the last; deterministic.
function synthetic({ jobs = 3, stages = 4, ops = 5 } = {}) {
  const nodes = [{ id: 'application', kind: 'application', parent: null, data: {} }];
  const edges = [];
  let previous = null;
  let previousCapture = null;
  nodes.push({ id: 'dataset:in', kind: 'dataset', parent: null, data: {} });
  nodes.push({ id: 'dataset:out', kind: 'dataset', parent: null, data: {} });
  for (let j = 0; j < jobs; j += 1) {
    nodes.push({ id: `job:${j}`, kind: 'job', parent: 'application', data: {} });
    for (let s = 0; s < stages; s += 1) {
      const sid = j * stages + s;
      nodes.push({ id: `stage:${sid}`, kind: 'stage', parent: `job:${j}`, data: {} });
      for (let o = 0; o < ops; o += 1) {
        const op = `op:${sid}:${o}`;
        nodes.push({ id: op, kind: 'operator', parent: `stage:${sid}`, data: {} });
        const capture = `capture:${sid}-${o}`;
        nodes.push({ id: capture, kind: 'capture', parent: op, data: {} });
        if (previous) edges.push({ id: `${previous}->${op}`, source: previous, target: op, kind: o ? 'narrow' : 'shuffle' });
        else edges.push({ id: `dataset:in->${op}`, source: 'dataset:in', target: op, kind: 'read' });
        if (previousCapture) edges.push({ id: `${previousCapture}->${capture}`, source: previousCapture, target: capture, kind: 'capture' });
        previous = op;
        previousCapture = capture;
      }
    }
  }
  edges.push({ id: `${previous}->dataset:out`, source: previous, target: 'dataset:out', kind: 'write' });
  return { application: { app_id: 'synthetic' }, nodes, edges };
}

const GRAPHS = { fixture: fixture('zoom_graph.json'), synthetic: synthetic() };

// The neighbours a set of original nodes has outside itself, as drawn in a state.
function outside(graph, tree, collapsed, members) {
  const inputs = new Set();
  const outputs = new Set();
  for (const edge of graph.edges) {
    const inS = members.has(edge.source);
    const inT = members.has(edge.target);
    if (inS && !inT) outputs.add(shownAs(tree, collapsed, edge.target));
    if (inT && !inS) inputs.add(shownAs(tree, collapsed, edge.source));
  }
  return { inputs: [...inputs].sort(), outputs: [...outputs].sort() };
}

function descendants(tree, id) {
  const all = new Set([id]);
  const stack = [id];
  while (stack.length) for (const child of tree.childrenOf.get(stack.pop()) ?? []) if (!all.has(child)) { all.add(child); stack.push(child); }
  return all;
}

for (const [name, graph] of Object.entries(GRAPHS)) {
  describe(`zoom levels of the ${name} graph`, () => {
    const tree = zoomTree(graph);

    it('draws the whole graph at the capture level', () => {
      const drawn = visibleGraph(graph, levelState(tree, 'capture'), tree);
      assert.deepEqual(ids(drawn), ids(graph));
      assert.deepEqual(pairs(drawn), pairs(graph));
    });

    for (const level of LEVELS) {
      it(`shows ${level} nodes collapsed and nothing inside them`, () => {
        const drawn = visibleGraph(graph, levelState(tree, level), tree);
        const depthOf = (id) => { let d = 0; for (let p = tree.parentOf.get(id); p; p = tree.parentOf.get(p)) d += 1; return d; };
        const levelDepth = LEVELS.indexOf(level);
        for (const node of drawn.nodes) {
          if (node.kind === 'dataset') continue;
          assert.ok(depthOf(node.id) <= levelDepth, `${node.id} is below ${level}`);
          if (node.kind === level && isCompound(tree, node.id)) assert.equal(node.collapsed, true);
        }
        // every drawn edge joins drawn nodes, never a node to itself, at most once per pair
        const drawnIds = new Set(drawn.nodes.map((n) => n.id));
        for (const edge of drawn.edges) {
          assert.ok(drawnIds.has(edge.source) && drawnIds.has(edge.target), edge.id);
          assert.notEqual(edge.source, edge.target);
        }
        assert.equal(new Set(pairs(drawn)).size, drawn.edges.length);
        // every original node is drawn or inside exactly one drawn collapsed node, whose counts say so
        const hiddenTotal = drawn.nodes.reduce((n, node) => n + Object.values(node.data?.hidden ?? {}).reduce((a, b) => a + b, 0), 0);
        assert.equal(drawn.nodes.length + hiddenTotal, tree.nodes.size);
        assert.equal(drawn.nodes.length, drawnCount(tree, levelState(tree, level)));
        // toElements draws it: compound parents are drawn nodes
        const elements = toElements(drawn);
        for (const element of elements) if (element.data.parent) assert.ok(drawnIds.has(element.data.parent));
      });

      it(`ZoomIn(ZoomOut(G)) = G for every node at the ${level} level`, () => {
        const state = levelState(tree, level);
        const before = visibleGraph(graph, state, tree);
        for (const node of before.nodes) {
          if (!isCompound(tree, node.id) || state.has(node.id)) continue;
          const out = zoomOut(tree, state, node.id);
          const collapsedView = visibleGraph(graph, out, tree);
          // a collapsed node keeps the inputs and outputs of what it holds
          const members = descendants(tree, node.id);
          const expected = outside(graph, tree, out, members);
          const drawnIn = collapsedView.edges.filter((e) => e.target === node.id).map((e) => e.source).sort();
          const drawnOut = collapsedView.edges.filter((e) => e.source === node.id).map((e) => e.target).sort();
          assert.deepEqual({ inputs: drawnIn, outputs: drawnOut }, expected, node.id);
          assert.deepEqual(visibleGraph(graph, zoomIn(out, node.id), tree), before, node.id);
        }
        // and ZoomOut(ZoomIn(G)) = G for the nodes the level collapses
        for (const id of state) {
          assert.deepEqual(visibleGraph(graph, zoomOut(tree, zoomIn(state, id), id), tree), before, id);
        }
      });
    }

    it('keeps what is collapsed inside a node when the node is collapsed and expanded again', () => {
      const state = levelState(tree, 'stage');
      const job = [...tree.nodes.values()].find((n) => n.kind === 'job').id;
      const again = zoomIn(zoomOut(tree, state, job), job);
      assert.deepEqual(again, state);
    });

    it('round-trips its state through the URL', () => {
      for (const level of LEVELS) {
        let state = levelState(tree, level);
        const some = [...tree.nodes.keys()].filter((id) => isCompound(tree, id));
        state = zoomIn(state, some.slice(0, 2));
        state = zoomOut(tree, state, some.slice(-2));
        const url = stateToUrl(tree, level, state);
        const back = stateFromUrl(tree, JSON.parse(JSON.stringify(url)));
        assert.equal(back.level, level);
        assert.deepEqual([...back.collapsed].sort(), [...state].sort());
      }
      assert.equal(stateFromUrl(tree, { level: 'nonsense', in: ['nope'] }).level, readableLevel(tree));
    });
  });
}

describe('the level a graph opens at', () => {
  it('is the deepest level that stays readable, the stages at worst', () => {
    const small = zoomTree(fixture('zoom_graph.json'));
    assert.equal(readableLevel(small), 'capture'); // 17 nodes
    const big = zoomTree(synthetic({ jobs: 10, stages: 20, ops: 25 })); // 5,000 operators
    assert.equal(drawnCount(big, levelState(big, 'operator')) > 5000, true);
    assert.equal(readableLevel(big), 'stage'); // never a handful of job boxes
    assert.equal(readableLevel(big, 6000), 'operator');
    assert.equal(readableLevel(zoomTree(synthetic({ jobs: 1, stages: 2, ops: 20 }))), 'operator'); // 40 operators
    assert.equal(readableLevel(zoomTree({ nodes: [] })), 'record');
  });

  it('draws only stages and jobs of a 5,000-operator application at the stage level', () => {
    const graph = synthetic({ jobs: 10, stages: 20, ops: 25 });
    const tree = zoomTree(graph);
    const counts = countElements(toElements(visibleGraph(graph, levelState(tree, 'stage'), tree)));
    assert.deepEqual(counts, { stage: 200, operator: 0, dataset: 2, edges: 201 });
  });

  it('never opens a level too big to draw from a URL', () => {
    const big = zoomTree(synthetic({ jobs: 10, stages: 20, ops: 25 }));
    assert.equal(stateFromUrl(big, { level: 'operator' }).level, 'stage');
    assert.equal(stateFromUrl(big, { level: 'job' }).level, 'job');
  });

  it('ignores zooming a node that holds nothing', () => {
    const tree = zoomTree(fixture('zoom_graph.json'));
    assert.deepEqual(zoomOut(tree, new Set(), 'dataset:1'), new Set());
  });
});

describe('zoomSelection', () => {
  const tree = zoomTree(fixture('zoom_graph.json'));

  it('opens the collapsed nodes of a selection, and collapses the nodes holding it', () => {
    const stages = levelState(tree, 'stage');
    const opened = zoomSelection(tree, stages, ['stage:0', 'stage:1', 'dataset:1'], 'in');
    assert.equal(opened.has('stage:0') || opened.has('stage:1'), false);
    assert.deepEqual([...opened].sort(), [...stages].filter((id) => !['stage:0', 'stage:1'].includes(id)).sort());
    const closed = zoomSelection(tree, opened, ['op:0:1', 'stage:1'], 'out');
    assert.deepEqual([...closed].sort(), [...stages].sort(), 'a leaf collapses its stage, a compound itself');
    assert.deepEqual(zoomSelection(tree, stages, [], 'in'), stages);
  });
});

describe('the zoom state in the URL', () => {
  it('writes the level and the nodes opened or closed, keeping the other parameters', () => {
    const query = zoomQuery('x=1&level=job&out=job:0', { level: 'stage', in: ['stage:3'], out: ['job:1', 'job:2'] }, true);
    assert.equal(query, 'x=1&level=stage&in=stage%3A3&out=job%3A1&out=job%3A2&skipped=1');
    const back = new URLSearchParams(query);
    assert.deepEqual([back.get('level'), back.getAll('in'), back.getAll('out')], ['stage', ['stage:3'], ['job:1', 'job:2']]);
  });

  it('leaves the state out rather than write a URL the server refuses: a reload opens where the page opens', () => {
    const out = Array.from({ length: 299 }, (_, j) => `job:${j}`);
    const query = zoomQuery('x=1', { level: 'stage', in: [], out }, true);
    assert.equal(query, 'x=1&skipped=1');
    assert.ok(zoomQuery('', { level: 'stage', in: [], out: out.slice(0, 49) }).length <= URL_QUERY_MAX, '50 jobs keep theirs');
  });
});

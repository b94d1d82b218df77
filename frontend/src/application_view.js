// The application page's graph at its zoom state (zoom.js): what is drawn, where its nodes go
// (the layout kept for this state, the rest kept in place around a zoomed node, the layout stored
// in this browser, or a fresh layout), the view on it, and the controls and panel that follow.

import {
  fitsReadable, focusJob, focusedOpening, openingLevels, openingViewport, readableNodeCount, unionBox,
} from './framing.js';
import { READABLE_ZOOM, summaryLine, syncElements, toElements, withoutSkipped } from './graph.js';
import { drawnBox, expandInPlace, leafPositions, nodeBoxes, restorePositions, runLayout } from './layout.js';
import { keepLayout, layoutKey, readLayout } from './layout_cache.js';
import {
  WINDOW_FACTOR, drawnLeafIds, nearestLeaves, restrictTo, windowSeeds, withAncestors, within,
} from './neighbourhood.js';
import { el } from './dom.js';
import { writeUrlZoom } from './zoom_url.js';
import {
  LEVELS, LEVEL_NAMES, MAX_DRAWN, drawnCount, isCompound, levelState, stateFromUrl, stateToUrl, visibleGraph, zoomIn,
  zoomOut, zoomSelection, zoomTree,
} from './zoom.js';

// Zoom states whose layout is kept for going back to them (application page).
const LAYOUTS_KEPT = 24;

/** Counts of the application's stages, operators and datasets, whatever the zoom. */
function kindCounts(graph) {
  const counts = { stage: 0, operator: 0, dataset: 0 };
  for (const node of graph.nodes ?? []) if (node?.kind in counts) counts[node.kind] += 1;
  return counts;
}

/** Nodes each level draws (0: the level has no node), for the level buttons. */
function sizesOf(tree) {
  return new Map(LEVELS.map((name) => [name,
    [...tree.nodes.values()].some((node) => node.kind === name) ? drawnCount(tree, levelState(tree, name)) : 0]));
}

export class ApplicationView {
  /**
   * `graph`: the API's graph; `parts`: the page's parts (application_toolbar.pageParts); `panel`: a
   * NodePanel; `fromUrl`: the zoom state of the page's URL; `skipped`: how many stages were skipped.
   */
  constructor(cy, graph, { parts, panel, storage, fromUrl, skipped }) {
    Object.assign(this, { cy, graph, parts, panel, storage, skipped });
    this.hasLineage = (graph.nodes ?? []).some((node) => node?.kind !== 'application');
    // Every change redraws from the graph drawn (skipped stages left out unless asked for), its
    // nesting, the level last chosen and the collapsed nodes (zoom.visibleGraph).
    this.setBase();
    ({ level: this.level, collapsed: this.collapsed } = stateFromUrl(this.tree, fromUrl));
    this.levelChosen = fromUrl.level !== null && this.level === fromUrl.level;
    this.zoomedByHand = fromUrl.in.length > 0 || fromUrl.out.length > 0;
    this.selectedId = null;
    this.lastDraw = {}; // how long the last draw took, by step (ms): read by bench/browser_graph.py
    // Each zoom state's layout, so that going back to a state draws it as it was, without laying it
    // out again (the last LAYOUTS_KEPT states; forgotten when the drawn graph changes).
    this.layouts = new Map();
    // The job framed when the whole graph does not fit the view (framing.focusJob).
    this.framedJob = focusJob(this.tree);
    // A zoom state too big to draw whole draws only the nodes nearest what matters (neighbourhood.js):
    // the ids drawn (null: all), and those nearest first (the opening frames the ones that read).
    this.window = null;
    this.windowOrder = null;
  }

  /** Leaves drawn at most by one opening or zoom: twice what the view reads, room to pan around it. */
  windowBudget() {
    return WINDOW_FACTOR * readableNodeCount(this.cy.width(), this.cy.height());
  }

  // The page opens on the whole zoom state when its leaves are within the budget; else on the
  // leaves nearest the framed job's capture points or outputs (neighbourhood.js).
  limitOpening() {
    this.window = null;
    this.windowOrder = null;
    const visible = visibleGraph(this.base, this.collapsed, this.tree);
    if (drawnLeafIds(visible).length <= this.windowBudget()) return;
    const seeds = windowSeeds(this.tree, visible, this.collapsed, this.framedJob);
    this.windowOrder = nearestLeaves(visible, seeds, this.windowBudget());
    this.window = withAncestors(this.tree, this.windowOrder);
  }

  // ZoomIn of `id` in a window draws all it holds, when that is within the budget; else (window or
  // not) only the leaves inside it nearest its capture points or outputs, besides what is drawn.
  limitZoomIn(id) {
    const visible = visibleGraph(this.base, this.collapsed, this.tree);
    const inside = drawnLeafIds(visible).filter((leaf) => leaf !== id && within(this.tree, leaf, id));
    if (inside.length <= this.windowBudget()) {
      if (this.window) this.window = new Set([...this.window, ...withAncestors(this.tree, inside)]);
      return;
    }
    const drawn = this.window ?? new Set(this.cy.nodes().map((node) => node.id()));
    const seeds = windowSeeds(this.tree, visible, this.collapsed, id);
    const nearest = nearestLeaves(visible, seeds, this.windowBudget(), new Set(inside));
    this.window = new Set([...drawn, ...withAncestors(this.tree, nearest)]);
  }

  /** What a window leaves out, for the status line ('' when all is drawn). */
  windowNote() {
    if (!this.window) return '';
    const all = drawnLeafIds(visibleGraph(this.base, this.collapsed, this.tree)).length;
    const drawn = this.cy.nodes().filter((node) => !node.isParent()).length;
    const near = this.framedJob === null ? 'the outputs' : this.tree.nodes.get(this.framedJob).label ?? this.framedJob;
    return all > drawn ? ` · ${drawn} of ${all} nodes drawn, those nearest ${near}: choose a level to draw them all` : '';
  }

  setBase() {
    this.base = this.parts.showSkipped.checked ? this.graph : withoutSkipped(this.graph);
    this.tree = zoomTree(this.base);
    this.levelSizes = sizesOf(this.tree);
  }

  stateKey() {
    return [...this.collapsed].sort().join('\n');
  }

  // Redraws the current zoom state. `focus` (a zoom of one node: {id, before, box}) keeps the
  // rest of the graph in place (layout.expandInPlace) and the view on that node; else the view
  // shows the whole graph, or the framed job when the whole is too big to read
  // (framing.openingViewport). Returns the box of what is drawn.
  draw(focus = null) {
    this.parts.root.dataset.layout = 'running';
    const t0 = performance.now();
    const elements = toElements(restrictTo(visibleGraph(this.base, this.collapsed, this.tree), this.window));
    const t1 = performance.now();
    this.cy.batch(() => syncElements(this.cy, elements));
    const t2 = performance.now();
    const key = this.stateKey();
    const kept = this.layouts.get(key);
    const placed = this.place(elements, kept, focus);
    const t3 = performance.now();
    const box = this.frame(placed, kept, focus);
    this.remember(key, placed.how, kept, box);
    this.lastDraw = {
      elements: t1 - t0, add: t2 - t1, layout: t3 - t2, view: performance.now() - t3, nodes: this.cy.nodes().length,
      how: placed.how,
    };
    this.refreshControls();
    this.lastDraw.total = performance.now() - t0;
    this.restoreSelection();
    // idle once the new graph is drawn: clicks hit what is on the screen from then on
    requestAnimationFrame(() => requestAnimationFrame(() => { this.parts.root.dataset.layout = 'idle'; }));
    return box ?? drawnBox(this.cy);
  }

  /** Places the drawn nodes; says how ('kept', 'in place', 'stored', or the layout run's kind). */
  place(elements, kept, focus) {
    const { cy } = this;
    const storedKey = layoutKey(elements);
    let stored = null;
    let how;
    if (kept && restorePositions(cy, kept.positions)) how = 'kept';
    else if (focus?.box && expandInPlace(cy, focus.before, focus.box)) how = 'in place';
    else if ((stored = readLayout(this.storage, storedKey)) && restorePositions(cy, stored.positions)) {
      how = 'stored'; // laid out in this browser before (an earlier visit): nothing measured again
    } else {
      // synchronous: done when it returns; a window's few boxes are laid out flat (compound dagre
      // took 0.23 s for the 92 nodes of a 500-job application's opening)
      how = runLayout(cy, this.window ? { flat: true } : {});
    }
    return { how, stored, storedKey };
  }

  /** Moves the view (onto the focused node, or the opening view); returns the drawn box when known. */
  frame({ how, stored, storedKey }, kept, focus) {
    const { cy } = this;
    let box = how === 'kept' ? kept.box : how === 'stored' ? stored.box : null;
    if (focus && cy.getElementById(focus.id).nonempty()) this.centreOn(cy.getElementById(focus.id));
    else {
      box = box ?? drawnBox(cy);
      const job = how === 'stored' ? stored.job : this.openingFocus();
      cy.viewport(openingViewport(box, job, cy.width(), cy.height()));
      if (how === 'flat' || how === 'compound') keepLayout(this.storage, storedKey, leafPositions(cy), { box, job });
    }
    return box;
  }

  // What the opening frames: of a window, the nearest leaves first and then each next one that
  // still lets the whole read at once (the nearest in the graph's order may sit a row away), else
  // the framed job.
  openingFocus() {
    const { cy, windowOrder } = this;
    if (windowOrder) {
      const boxes = nodeBoxes(cy, windowOrder);
      let box = null;
      for (const id of windowOrder) {
        const wider = box ? unionBox(new Map([['box', box], [id, boxes.get(id)]]), ['box', id]) : unionBox(boxes, [id]);
        if (!box || fitsReadable(wider, cy.width(), cy.height())) box = wider;
      }
      return box;
    }
    return this.framedJob === null ? null : nodeBoxes(cy, [this.framedJob]).get(this.framedJob) ?? null;
  }

  /** Keeps the state's layout, the newest last, forgetting the oldest past LAYOUTS_KEPT. */
  remember(key, how, kept, box) {
    this.layouts.delete(key);
    // positions only (the widths are measured when zooming), and the box once measured
    this.layouts.set(key, {
      positions: how === 'kept' ? kept.positions : leafPositions(this.cy), box: box ?? kept?.box ?? null,
    });
    if (this.layouts.size > LAYOUTS_KEPT) this.layouts.delete(this.layouts.keys().next().value);
  }

  /** The level buttons, the status line, the URL and the finder's names follow what is drawn. */
  refreshControls() {
    const { levelButtons, status, showSkipped, names } = this.parts;
    for (const [name, button] of Object.entries(levelButtons)) {
      button.setAttribute('aria-pressed', String(name === this.level));
      const size = this.levelSizes.get(name);
      button.disabled = size === 0 || size > MAX_DRAWN;
      button.title = size > MAX_DRAWN
        ? `${size} nodes at this level: too many to draw at once; zoom into the nodes you need`
        : '';
    }
    status.textContent = this.hasLineage
      ? `${summaryLine(kindCounts(this.base), { skipped: this.skipped, hidden: !showSkipped.checked })} · showing ${LEVEL_NAMES[this.level].toLowerCase()}`
      : 'No lineage was captured for this application yet.';
    status.textContent += this.windowNote();
    writeUrlZoom(this.tree, this.level, this.collapsed, showSkipped.checked);
    names.replaceChildren(...this.cy.nodes().map((node) => el('option', { value: node.data('title') })));
  }

  /** The node picked before the draw stays picked where it is still drawn. */
  restoreSelection() {
    const selected = this.selectedId === null ? null : this.cy.getElementById(this.selectedId);
    if (selected?.nonempty()) {
      selected.select();
      this.showDetails(selected);
    } else this.unselect();
  }

  unselect() {
    this.selectedId = null;
    this.panel.clear();
  }

  // The page opens (without a level in its URL) at the deepest level whose whole graph fits the
  // view readably, trying levels up to the stages (framing.openingLevels); the last one tried
  // stays, framed on its job. A graph whose stages are more than the view reads opens on the
  // framed job's stages, the other jobs collapsed (framing.focusedOpening).
  open() {
    if (this.levelChosen) {
      // A level alone (a reload of the address the opening wrote) opens as the opening did, on the
      // nodes nearest what matters when the level is too big to draw whole; nodes zoomed in or out
      // by hand (in=/out=) are drawn as they were.
      if (!this.zoomedByHand) this.limitOpening();
      this.draw();
      return;
    }
    const focused = focusedOpening(this.tree, this.framedJob, this.cy.width(), this.cy.height());
    if (focused) {
      ({ level: this.level, collapsed: this.collapsed } = focused);
      this.limitOpening();
      this.draw();
      return;
    }
    const candidates = openingLevels(this.tree);
    for (const [i, candidate] of candidates.entries()) {
      this.level = candidate;
      this.collapsed = levelState(this.tree, candidate);
      this.limitOpening();
      const box = this.draw();
      if (i === candidates.length - 1 || fitsReadable(box, this.cy.width(), this.cy.height())) return;
    }
  }

  showLevel(name) {
    this.window = null; // a level is drawn whole
    this.windowOrder = null;
    this.level = name;
    this.collapsed = levelState(this.tree, name);
    this.draw();
  }

  /** Showing or hiding skipped stages keeps the level and what was zoomed by hand. */
  toggleSkipped() {
    const url = stateToUrl(this.tree, this.level, this.collapsed);
    this.setBase();
    this.layouts.clear();
    this.window = null;
    this.windowOrder = null;
    ({ level: this.level, collapsed: this.collapsed } = stateFromUrl(this.tree, url));
    this.draw();
  }

  // ZoomIn on a collapsed node shows what it holds; ZoomOut collapses a compound node, or the
  // node holding a leaf. The selection follows to the node drawn in its place.
  zoom(node, direction) {
    const { cy, tree } = this;
    const id = node.id();
    const drawn = cy.getElementById(id);
    const focus = { id, before: leafPositions(cy, { widths: true }), box: drawn.nonempty() ? drawn.boundingBox({ includeLabels: false }) : null };
    this.windowOrder = null; // the view follows the zoomed node now
    if (direction === 'in') {
      this.collapsed = zoomIn(this.collapsed, id);
      this.limitZoomIn(id);
    } else {
      const target = isCompound(tree, id) ? id : tree.parentOf.get(id);
      if (target === undefined) return;
      this.collapsed = zoomOut(tree, this.collapsed, target);
      this.selectedId = target;
      focus.id = target;
      focus.box = null; // collapsing: the state it came from is kept, else a full layout
    }
    this.draw(focus);
  }

  /** Zooms the selected nodes in or out; nothing is drawn again when that changes nothing. */
  zoomSelected(direction) {
    const selectedIds = this.cy.nodes(':selected').map((node) => node.id());
    const next = zoomSelection(this.tree, this.collapsed, selectedIds, direction);
    if (next.size === this.collapsed.size && [...next].every((id) => this.collapsed.has(id))) return;
    const opened = [...this.collapsed].filter((id) => !next.has(id));
    this.collapsed = next;
    this.windowOrder = null;
    for (const id of opened) this.limitZoomIn(id);
    this.draw();
  }

  // Pans (and zooms up to a readable size, never down) so that `node` is in the middle of the view.
  centreOn(node) {
    const { cy } = this;
    const zoomLevel = Math.max(cy.zoom(), READABLE_ZOOM);
    const { x, y } = node.position();
    cy.viewport({ zoom: zoomLevel, pan: { x: cy.width() / 2 - x * zoomLevel, y: cy.height() / 2 - y * zoomLevel } });
  }

  zoomAction(node) {
    const { tree } = this;
    const id = node.id();
    if (this.collapsed.has(id)) return { direction: 'in', text: `Zoom in (show its ${node.data('kind') === 'job' ? 'stages' : 'contents'})` };
    if (isCompound(tree, id)) return { direction: 'out', text: `Zoom out (collapse this ${node.data('kind')})` };
    const parent = tree.parentOf.get(id);
    if (parent !== undefined) return { direction: 'out', text: `Zoom out (collapse its ${tree.nodes.get(parent).kind})` };
    return null;
  }

  showDetails(node) {
    this.selectedId = node.id();
    this.panel.show(node, {
      tree: this.tree, action: this.zoomAction(node), onZoom: (direction) => this.zoom(node, direction),
    });
  }
}

// The Cytoscape stylesheet, as plain data. Colours are also named in app.css for the legend.

export const COLORS = {
  ink: '#1f2933',
  muted: '#6b7785',
  edge: '#8a94a6',
  operatorFill: '#e8eef8',
  operatorBorder: '#4f6fa5',
  pythonFill: '#eef5e6',
  pythonBorder: '#5e8a3a',
  stageFill: '#f6f7fb',
  stageBorder: '#98a2b3',
  collapsedFill: '#dde5f3',
  jobFill: '#fbfbfd',
  jobBorder: '#5b6475',
  captureFill: '#fff6d5',
  captureBorder: '#a37b00',
  failed: '#c0392b',
  running: '#2f7fd1',
  readFill: '#d7f0eb',
  readBorder: '#23897a',
  writtenFill: '#fde7cf',
  writtenBorder: '#d06a12',
  shuffle: '#7b5ea7',
  selected: '#f2a100',
};

const CHAR_WIDTH = 7.2;
const LINE_HEIGHT = 15;

/** Width of a node that fits its longest label line (labels use a 12px sans-serif font). */
export function labelWidth(label, { min = 80, padding = 20 } = {}) {
  const longest = Math.max(0, ...String(label ?? '').split('\n').map((line) => line.length));
  return Math.max(min, Math.round(longest * CHAR_WIDTH + padding));
}

/** Height of a node that fits its label lines. */
export function labelHeight(label, { min = 36, padding = 16 } = {}) {
  const lines = String(label ?? '').split('\n').length;
  return Math.max(min, lines * LINE_HEIGHT + padding);
}

const sized = {
  width: (ele) => labelWidth(ele.data('label')),
  height: (ele) => labelHeight(ele.data('label')),
};

/** The stylesheet given to cytoscape({style}). */
export function graphStyle() {
  return [
    {
      selector: 'node',
      style: {
        label: 'data(label)',
        'font-family': 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
        'font-size': 12,
        color: COLORS.ink,
        'text-wrap': 'wrap',
        'text-max-width': 400,
        'text-valign': 'center',
        'text-halign': 'center',
        'border-width': 1.5,
        ...sized,
      },
    },
    {
      selector: 'node.operator',
      style: {
        shape: 'round-rectangle',
        'background-color': COLORS.operatorFill,
        'border-color': COLORS.operatorBorder,
      },
    },
    {
      selector: 'node.operator.python',
      style: { 'background-color': COLORS.pythonFill, 'border-color': COLORS.pythonBorder },
    },
    { selector: 'node.operator.cached', style: { 'border-width': 3, 'border-style': 'double' } },
    {
      selector: 'node.stage',
      style: {
        shape: 'round-rectangle',
        'background-color': COLORS.stageFill,
        'border-color': COLORS.stageBorder,
        'font-weight': 'bold',
      },
    },
    {
      selector: 'node.stage:parent',
      style: {
        'text-valign': 'top',
        'text-halign': 'center',
        'text-margin-y': -4,
        'border-style': 'dashed',
        padding: 14,
        // The title above the box is clickable, so a stage can be selected without hitting an operator.
        'text-events': 'yes',
      },
    },
    {
      // Jobs and the application: boxes around their stages, titled above, told apart from stages
      // by their border (solid for the application, double for jobs) as well as their colour.
      selector: 'node.job, node.application',
      style: {
        shape: 'round-rectangle',
        'background-color': COLORS.jobFill,
        'border-color': COLORS.jobBorder,
        'font-weight': 'bold',
      },
    },
    { selector: 'node.job', style: { 'border-style': 'double', 'border-width': 3 } },
    {
      selector: 'node.job:parent, node.application:parent',
      style: { 'text-valign': 'top', 'text-margin-y': -4, padding: 18, 'text-events': 'yes' },
    },
    { selector: 'node.application:parent', style: { 'background-opacity': 0.25, padding: 24 } },
    {
      selector: 'node.capture',
      style: {
        shape: 'tag',
        'background-color': COLORS.captureFill,
        'border-color': COLORS.captureBorder,
        'font-size': 11,
      },
    },
    {
      // A collapsed node (anything holding hidden nodes): solid, thicker border and a "+" in its label.
      selector: 'node.collapsed',
      style: { 'background-color': COLORS.collapsedFill, 'border-width': 2.5, 'border-style': 'solid' },
    },
    { selector: 'node.stage.status-failed', style: { 'border-color': COLORS.failed, 'border-width': 2.5 } },
    { selector: 'node.stage.status-running', style: { 'border-color': COLORS.running } },
    { selector: 'node.stage.status-skipped', style: { opacity: 0.55 } },
    {
      selector: 'node.dataset',
      style: {
        shape: 'barrel',
        'background-color': COLORS.readFill,
        'border-color': COLORS.readBorder,
        'border-width': 2,
        width: (ele) => labelWidth(ele.data('label'), { min: 90, padding: 28 }),
        height: (ele) => labelHeight(ele.data('label'), { min: 44, padding: 22 }),
      },
    },
    {
      selector: 'node.dataset-written',
      style: { 'background-color': COLORS.writtenFill, 'border-color': COLORS.writtenBorder },
    },
    {
      selector: 'node.dataset-read-written',
      style: {
        'background-fill': 'linear-gradient',
        'background-gradient-stop-colors': `${COLORS.readFill} ${COLORS.writtenFill}`,
        'background-gradient-direction': 'to-right',
        'border-color': COLORS.writtenBorder,
      },
    },
    {
      // The dataset graph across applications: applications as hexagons (shape, not colour alone).
      selector: 'node.app',
      style: { shape: 'round-hexagon', 'background-color': COLORS.operatorFill, 'border-color': COLORS.operatorBorder,
        'border-width': 2, width: (ele) => labelWidth(ele.data('label'), { padding: 40 }) },
    },
    { selector: 'node.center', style: { 'border-width': 4, 'font-weight': 'bold' } },
    { selector: 'node.expanded', style: { 'border-style': 'double' } },
    {
      selector: 'edge',
      style: {
        width: 1.5,
        'line-color': COLORS.edge,
        'target-arrow-color': COLORS.edge,
        'target-arrow-shape': 'triangle',
        'arrow-scale': 0.9,
        'curve-style': 'bezier',
      },
    },
    {
      selector: 'edge.shuffle',
      style: { width: 2.5, 'line-color': COLORS.shuffle, 'target-arrow-color': COLORS.shuffle, 'line-style': 'dashed' },
    },
    { selector: 'edge.read', style: { width: 2, 'line-color': COLORS.readBorder, 'target-arrow-color': COLORS.readBorder } },
    {
      selector: 'edge.write',
      style: { width: 2, 'line-color': COLORS.writtenBorder, 'target-arrow-color': COLORS.writtenBorder },
    },
    { selector: 'edge.stage', style: { 'line-style': 'dotted', opacity: 0.6 } },
    { selector: 'edge.capture', style: { 'line-style': 'dashed', width: 1, opacity: 0.7 } },
    // An edge drawn for hidden nodes (zoom.js lifts it to the collapsed nodes holding its ends).
    { selector: 'edge.lifted', style: { width: 2 } },
    // A trace or what-if laid over the graph: crossed capture points thick-bordered, the path to
    // them dashed; a what-if's fate by colour *and* border style (deleted dotted, changed double).
    { selector: 'node.on-path', style: { 'border-color': COLORS.selected, 'border-width': 2.5 } },
    { selector: 'node.crossed', style: { 'border-color': COLORS.selected, 'border-width': 4, 'font-weight': 'bold' } },
    { selector: 'node.result', style: { 'background-color': '#ffe7a3' } },
    { selector: 'node.fate-deleted', style: { 'background-color': '#f6c9c4', 'border-color': COLORS.failed, 'border-style': 'dotted' } },
    { selector: 'node.fate-changed', style: { 'background-color': '#fde7cf', 'border-color': COLORS.writtenBorder, 'border-style': 'double', 'border-width': 5 } },
    { selector: 'node.fate-unchanged', style: { 'background-color': '#e3f1e0', 'border-color': COLORS.pythonBorder } },
    { selector: 'node.capture:parent', style: { 'text-valign': 'top', 'text-margin-y': -4, padding: 10, 'text-events': 'yes' } },
    { selector: 'node.record', style: { shape: 'round-rectangle', 'background-color': '#fff', 'border-color': COLORS.operatorBorder, 'font-size': 11 } },
    { selector: 'edge.lineage', style: { 'line-color': COLORS.selected, 'target-arrow-color': COLORS.selected } },
    // A provenance triple: its operation written along it.
    {
      selector: 'edge.operation',
      style: { label: 'data(label)', 'font-size': 10, 'text-rotation': 'autorotate', 'text-background-color': '#fff',
        'text-background-opacity': 0.85, 'text-background-padding': 2 },
    },
    {
      selector: ':selected',
      style: { 'border-color': COLORS.selected, 'border-width': 3, 'line-color': COLORS.selected },
    },
  ];
}

// Column lineage edges by kind (app.css names the same colours for the legend): direct kinds solid,
// indirect ones (a condition, or the columns deciding a dataset's rows) dashed.
export const KIND_COLORS = {
  identity: '#2f7fd1',
  transformation: '#7b5ea7',
  aggregation: '#d06a12',
  conditional: '#a37b00',
  filter: '#c0392b',
  join: '#23897a',
  'group-by': '#5e8a3a',
  sort: '#6b7785',
  window: '#b0427f',
  other: '#8a94a6',
};

/** The column mode's stylesheet: datasets as boxes holding their columns, edges coloured by kind. */
export function columnGraphStyle() {
  return [
    ...graphStyle(),
    {
      selector: 'node.dataset-box',
      style: {
        shape: 'round-rectangle', 'background-color': COLORS.readFill, 'background-opacity': 0.35,
        'border-color': COLORS.readBorder, 'text-valign': 'top', 'text-margin-y': -4, 'font-weight': 'bold',
        padding: 10, 'text-events': 'yes', width: 10, height: 10, // a box's size is its columns'
      },
    },
    {
      selector: 'node.dataset-box.flat',
      style: { width: 'data(w)', height: 'data(h)', 'z-compound-depth': 'bottom', 'z-index': 0, 'text-valign': 'top',
        'text-margin-y': -4 },
    },
    {
      selector: 'node.dataset-box.collapsed', // one node for its columns: its name and their count inside
      style: { 'text-valign': 'center', 'text-margin-y': 0, 'text-wrap': 'wrap', 'background-opacity': 0.8,
        'border-width': 2 },
    },
    {
      selector: 'node.column',
      style: {
        shape: 'round-rectangle', 'background-color': '#fff', 'border-color': COLORS.operatorBorder,
        'font-size': 11, width: 'data(w)', height: 24, // column_graph.js sizes it to its label
      },
    },
    { selector: 'node.center', style: { 'border-width': 3 } },
    // straight edges (a bezier's control points cost most of a first drawing of 650 edges)
    { selector: 'edge', style: { 'curve-style': 'straight' } },
    ...Object.entries(KIND_COLORS).map(([kind, color]) => ({
      selector: `edge.kind-${kind}`, style: { width: 1.8, 'line-color': color, 'target-arrow-color': color },
    })),
    { selector: 'edge.indirect', style: { 'line-style': 'dashed' } },
    { selector: 'node.picked', style: { 'border-color': COLORS.selected, 'border-width': 4, 'font-weight': 'bold' } },
    { selector: 'node.upstream', style: { 'background-color': '#dbe9fa', 'border-width': 2.5 } },
    { selector: 'node.downstream', style: { 'background-color': '#fde7cf', 'border-width': 2.5 } },
    { selector: 'edge.reached', style: { width: 3.5 } },
    { selector: '.faded', style: { opacity: 0.25 } },
  ];
}

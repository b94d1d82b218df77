// The trace and what-if page: the question, its progress while it runs (updated without reload),
// then its subgraph over the application graph, its records (paged) and downloads.

import cytoscape from 'cytoscape';
import dagre from 'cytoscape-dagre';

import { el, errorText, fetchJson, sendJson, statusBadge, tableCell } from './dom.js';
import { formatCount, formatDuration, formatTime } from './format.js';
import { toElements, withoutSkipped } from './graph.js';
import { PATH_MIN_ZOOM, openingViewport, pathNodes, unionBox } from './framing.js';
import { drawnBox, nodeBoxes, runLayout } from './layout.js';
import {
  FATES, FATE_MARKS, TERMINAL, ancestorsOf, columnSourceRows, overlay, pathGraph, progressFraction, progressText, questionZoom,
  recordColumns, recordRow, rowDeciders, selectionText, withRecords,
} from './question_view.js';
import { graphStyle } from './style.js';
import { onNodeTap } from './taps.js';
import { READABLE_NODES, isCompound, visibleGraph, zoomIn, zoomOut, zoomTree } from './zoom.js';

cytoscape.use(dagre);

const POLL_MS = 1000;
const PAGE_SIZE = 50;

const pagePath = (q) => `/${q.kind === 'whatif' ? 'whatifs' : 'traces'}/${q.id}/`;

function renderHeader(q) {
  const what = q.kind === 'whatif' ? 'What-if' : `${q.direction === 'forward' ? 'Forward' : 'Backward'} trace`;
  const facts = [
    ['Application', el('a', { href: `/applications/${encodeURIComponent(q.application)}/` }, q.application)],
    [q.kind === 'whatif' ? 'Deleted' : 'Selection', selectionText(q.selection)],
    ['From', q.capture_point || 'the outputs of the last action'],
    ['Target', q.target || 'end'],
    ['Asked by', `${q.created_by || '—'} · ${formatTime(q.created_at)}`],
  ];
  if (q.duration_ms !== null && q.duration_ms !== undefined) facts.push(['Took', formatDuration(q.duration_ms)]);
  if (q.reused) facts.push(['Answer', `reused from ${q.answered_from}`]);
  return el('div', { class: 'question-header app-header' },
    el('h1', {}, q.name || `${what} ${q.id}`, ' ', statusBadge(q.status)),
    el('div', { class: 'kind' }, what, q.pinned ? ' · pinned' : ''),
    el('dl', { class: 'facts' }, facts.map(([term, value]) => [el('dt', {}, term), el('dd', {}, value)])));
}

function renderProgress(q, onCancel) {
  const fraction = progressFraction(q);
  const bar = el('progress', { id: 'question-progress', max: 1, 'aria-label': 'Progress' });
  if (fraction !== null) bar.value = fraction;
  return el('div', { class: 'question-progress', role: 'status' },
    bar, el('span', { class: 'progress-text' }, progressText(q)),
    el('button', { type: 'button', id: 'cancel-question', onclick: onCancel }, 'Cancel'));
}

function renderWhatIfSummary(q) {
  const summary = q.summary ?? {};
  const output = summary.output ?? {};
  const replay = summary.replay ?? {};
  const counts = FATES.filter((fate) => output[fate] !== undefined)
    .map((fate) => el('li', { class: `fate fate-${fate}` }, `${FATE_MARKS[fate]} ${formatCount(output[fate])} ${fate}`));
  return el('section', { class: 'whatif-summary' },
    el('h2', {}, 'At the outputs'),
    el('ul', { class: 'fates', id: 'output-fates' }, counts),
    el('p', { class: 'replay' }, replay.done
      ? `New values of changed outputs: computed by replaying the job's own functions on what remains${replay.how ? ` (${replay.description || replay.how})` : ''}.`
      : `New values not computed: ${replay.reason ?? 'replay was not possible'}. The classes above come from the lineage alone.`));
}

/** A backward trace of a DataFrame output: each output column's source columns, or null. */
function renderTracedColumns(q) {
  const rows = columnSourceRows(q.columns);
  if (!rows) return null;
  const deciders = rowDeciders(q.columns);
  return el('section', { class: 'traced-columns' },
    el('h2', {}, 'Where its columns come from'),
    el('table', { class: 'grid', id: 'traced-columns' },
      el('thead', {}, el('tr', {}, ['Output column', 'Source dataset', 'Source column', 'How'].map((c) => el('th', { scope: 'col' }, c)))),
      el('tbody', {}, rows.map(([column, dataset, datasetId, source, how]) => el('tr', {},
        el('td', {}, column),
        el('td', {}, datasetId === null ? dataset : el('a', { href: `/datasets/${datasetId}/?mode=columns` }, dataset)),
        el('td', {}, source), el('td', {}, how))))),
    deciders.length ? el('p', { id: 'rows-decided-by' }, 'Which rows there are: decided by ', deciders.join(', '), '.') : null);
}

/** Mount on `root` (data-api-url: the question's API URL; data-graph-url: its application's graph). */
export async function mountQuestionPage(root) {
  const header = el('div', { class: 'question-header-slot' });
  const body = el('div', { class: 'question-body' });
  root.replaceChildren(header, body);
  root.dataset.state = 'loading';
  let question;

  const cancel = async () => {
    const answer = await sendJson(question.links.cancel, {});
    if (!answer.ok) body.prepend(el('p', { class: 'error', role: 'alert' }, `Cannot cancel: ${errorText(answer)}`));
  };

  async function poll() {
    try {
      question = await fetchJson(root.dataset.apiUrl);
    } catch (error) {
      body.replaceChildren(el('p', { class: 'error', role: 'alert' }, `Could not load it: ${error.message}`));
      root.dataset.state = 'error';
      return;
    }
    header.replaceChildren(renderHeader(question));
    root.dataset.status = question.status;
    if (!TERMINAL.includes(question.status)) {
      body.replaceChildren(renderProgress(question, cancel));
      root.dataset.state = 'running';
      setTimeout(poll, POLL_MS);
      return;
    }
    await showAnswer();
  }

  async function showAnswer() {
    const rerun = el('button', {
      type: 'button', id: 'rerun-question',
      onclick: async () => {
        const answer = await sendJson(question.links.rerun, {});
        if (answer.ok) window.location.assign(pagePath(answer.body));
        else rerun.after(el('span', { class: 'error', role: 'alert' }, ` ${errorText(answer)}`));
      },
    }, 'Run again');
    if (question.status !== 'succeeded') {
      body.replaceChildren(
        el('p', { class: 'error', role: 'alert' }, question.status === 'cancelled' ? 'Cancelled.' : `Failed: ${question.error}`),
        rerun);
      root.dataset.state = 'ready';
      return;
    }
    const kind = question.kind;
    const graphBox = el('div', { id: 'question-graph', class: 'graph', role: 'img', 'aria-label': `The ${kind}'s subgraph` });
    const table = el('div', { class: 'records-slot' });
    const downloads = el('p', { class: 'downloads' }, 'Download: ',
      el('a', { href: question.links.download_csv, id: 'download-csv' }, 'CSV'), ' · ',
      el('a', { href: question.links.download_jsonl, id: 'download-jsonl' }, 'JSON lines'), ' · ', rerun);
    const parts = [];
    if (kind === 'whatif') parts.push(renderWhatIfSummary(question));
    else {
      parts.push(el('p', { class: 'result-line', id: 'result-count' }, `${formatCount(question.result_count ?? 0)} records in the result`));
      const traced = renderTracedColumns(question);
      if (traced) parts.push(traced);
      // A trace goes on into the applications chained to this one by the text files they saved and read.
      const apps = question.summary?.applications ?? [];
      if (apps.length > 1) {
        parts.push(el('p', { class: 'crossed', id: 'crossed-applications' }, 'Across applications: ',
          apps.map((app, i) => [i ? ' · ' : '', el('a', { href: `/applications/${encodeURIComponent(app)}/` }, app)]),
          ' (the graph below is this application\'s; the records table holds every application\'s)'));
      }
      // "Select inputs like these": a what-if that deletes this trace's result.
      const whatIf = el('button', {
        type: 'button', id: 'whatif-from-trace',
        onclick: async () => {
          const answer = await sendJson('/api/v1/whatifs/', {
            application: question.application, selection: { trace: question.id },
            name: question.name ? `without: ${question.name}`.slice(0, 200) : '',
          });
          if (answer.ok) window.location.assign(pagePath(answer.body));
          else whatIf.after(el('span', { class: 'error', role: 'alert' }, ` ${errorText(answer)}`));
        },
      }, 'What if these records were deleted?');
      parts.push(el('p', {}, whatIf));
    }
    parts.push(el('h2', {}, 'On the application graph'), el('div', { class: 'graph-frame question-frame' }, graphBox));
    parts.push(el('h2', {}, 'Records'), downloads, table);
    body.replaceChildren(...parts);

    const [appGraph, questionGraph] = await Promise.all([fetchJson(root.dataset.graphUrl), fetchJson(question.links.graph)]);
    // A small trace's records sit inside their capture points: the zoom's record level. They are
    // shown at once when few enough to read; else each capture point holds its own until it is
    // double-clicked (double-click again to close it).
    // skipped stages never ran: left out, as on the application page
    const full = withRecords(pathGraph(withoutSkipped(appGraph), questionGraph.points), questionGraph);
    // the tree of the graph with the notes: visibleGraph draws the tree's nodes
    const { graph, marks } = overlay(full, questionGraph, kind, zoomTree(full));
    const tree = zoomTree(graph);
    const cy = cytoscape({ container: graphBox, style: graphStyle(), minZoom: 0.05, maxZoom: 3 });
    const records = [...tree.nodes.values()].filter((n) => n.kind === 'record').map((n) => n.id);
    const holders = [...ancestorsOf(tree, records)];
    let collapsed = zoomIn(questionZoom(tree, questionGraph.points ?? []), holders);
    if (records.length > READABLE_NODES) collapsed = zoomOut(tree, collapsed, holders.filter((id) => id.startsWith('capture:')));
    const draw = () => {
      cy.batch(() => {
        cy.elements().remove();
        cy.add(toElements(visibleGraph(graph, collapsed, tree)));
        for (const [id, classes] of marks) cy.getElementById(id).addClass(classes);
      });
      runLayout(cy);
      // the view opens on the path the answer took; the rest is there when zooming out
      const path = [...pathNodes(tree, collapsed, questionGraph.points ?? [], graph.edges)];
      const focus = unionBox(nodeBoxes(cy, path), path);
      cy.viewport(openingViewport(drawnBox(cy), focus, cy.width(), cy.height(), { minZoom: PATH_MIN_ZOOM }));
    };
    draw();
    onNodeTap(cy, (node, double) => {
      if (!double || !isCompound(tree, node.id())) return;
      collapsed = collapsed.has(node.id()) ? zoomIn(collapsed, node.id()) : zoomOut(tree, collapsed, node.id());
      draw();
    });
    window.lineageGraph = cy;

    const query = new URLSearchParams(window.location.search);
    // A what-if's table starts at its target (the outputs): old and new values side by side.
    const point = kind === 'whatif' ? (query.get('point') ?? question.summary?.target ?? '') : '';
    await showRecords(table, 1, kind === 'whatif' ? (query.get('fate') ?? '') : '', point);
    root.dataset.state = 'ready';
  }

  const setQuery = (name, value) => {
    const url = new URL(window.location.href);
    if (value) url.searchParams.set(name, value);
    else url.searchParams.delete(name);
    window.history.replaceState(null, '', url);
  };

  async function showRecords(slot, page, fate, point = '') {
    const kind = question.kind;
    const params = new URLSearchParams({ page, page_size: PAGE_SIZE });
    if (fate) params.set('fate', fate);
    if (point) params.set('capture_id', point);
    const answer = await fetchJson(`${question.links.records}?${params}`);
    const pages = Math.max(1, Math.ceil(answer.count / PAGE_SIZE));
    const controls = [];
    if (kind === 'whatif') {
      const select = el('select', { id: 'fate-filter', 'aria-label': 'Fate' },
        el('option', { value: '' }, 'every fate'),
        FATES.map((f) => el('option', { value: f, selected: f === fate }, `${FATE_MARKS[f]} ${f}`)));
      select.addEventListener('change', () => {
        setQuery('fate', select.value);
        showRecords(slot, 1, select.value, point);
      });
      const target = question.summary?.target;
      const points = el('select', { id: 'point-filter', 'aria-label': 'Capture point' },
        el('option', { value: '' }, 'every capture point'),
        (question.summary?.points ?? []).map((p) => el('option', { value: p.capture_id, selected: p.capture_id === point },
          `${p.capture_id.split('/').pop()}${p.capture_id === target ? ' (the outputs)' : ''}`)));
      points.addEventListener('change', () => {
        setQuery('point', points.value);
        showRecords(slot, 1, fate, points.value);
      });
      controls.push(el('label', {}, 'Show ', select), el('label', {}, ' at ', points));
    }
    const pager = el('span', { class: 'pager' },
      el('button', { type: 'button', class: 'previous', disabled: page <= 1, onclick: () => showRecords(slot, page - 1, fate, point) }, '‹ Previous'),
      ` page ${page} of ${pages} · ${formatCount(answer.count)} records `,
      el('button', { type: 'button', class: 'next', disabled: page >= pages, onclick: () => showRecords(slot, page + 1, fate, point) }, 'Next ›'));
    slot.replaceChildren(
      el('div', { class: 'records-controls' }, controls, pager),
      el('table', { class: 'grid records', id: 'records-table' },
        el('thead', {}, el('tr', {}, recordColumns(kind).map((c) => el('th', { scope: 'col' }, c)))),
        el('tbody', {}, answer.results.map((r) => el('tr', { class: kind === 'whatif' ? `fate-${r.fate}` : '' },
          recordRow(r, kind).map(tableCell))))));
    slot.dataset.page = String(page);
  }

  await poll();
}

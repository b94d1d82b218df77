// Pure description of what the side panel shows for a node: a title and sections of rows.
// node_panel.js turns the description into DOM; tests check it with fixture data.

import { formatBytes, formatCount, formatDuration, formatTime, recordIdCell } from './format.js';

const METRIC_LABELS = {
  tasks: 'Tasks',
  failed_tasks: 'Failed tasks',
  duration_ms: 'Task time',
  executor_run_time_ms: 'Executor run time',
  executor_cpu_time_ns: 'Executor CPU time',
  jvm_gc_time_ms: 'JVM GC time',
  input_bytes: 'Input bytes',
  input_records: 'Input records',
  output_bytes: 'Output bytes',
  output_records: 'Output records',
  shuffle_read_bytes: 'Shuffle read bytes',
  shuffle_read_records: 'Shuffle read records',
  shuffle_write_bytes: 'Shuffle write bytes',
  shuffle_write_records: 'Shuffle write records',
  memory_bytes_spilled: 'Memory spilled',
  disk_bytes_spilled: 'Disk spilled',
};

/** "Shuffle read bytes" for a known metric key, a humanized key otherwise. */
export function metricLabel(key) {
  if (METRIC_LABELS[key]) return METRIC_LABELS[key];
  const words = String(key).replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Format a metric by its unit suffix: bytes, milliseconds, nanoseconds, else a count. */
export function formatMetric(key, value) {
  if (value === null || value === undefined) return '—';
  if (typeof value !== 'number') return String(value);
  if (key.endsWith('_bytes') || key.endsWith('_spilled')) return formatBytes(value);
  if (key.endsWith('_ms')) return formatDuration(value);
  if (key.endsWith('_ns')) return formatDuration(value / 1e6);
  return formatCount(value);
}

/** Metric rows: known metrics in a fixed order, then any others the server adds, alphabetically. */
export function metricRows(metrics) {
  const entries = Object.entries(metrics ?? {});
  const known = Object.keys(METRIC_LABELS);
  entries.sort(([a], [b]) => {
    const ia = known.indexOf(a);
    const ib = known.indexOf(b);
    if (ia >= 0 && ib >= 0) return ia - ib;
    if (ia >= 0) return -1;
    if (ib >= 0) return 1;
    return a.localeCompare(b);
  });
  return entries.map(([key, value]) => [metricLabel(key), formatMetric(key, value)]);
}

function elapsed(startIso, endIso) {
  if (!startIso || !endIso) return null;
  const ms = new Date(endIso).getTime() - new Date(startIso).getTime();
  return Number.isNaN(ms) ? null : ms;
}

function present(rows) {
  return rows.filter(([, value]) => value !== null && value !== undefined && value !== '');
}

function stageDetails(info) {
  const sections = [
    {
      heading: 'Summary',
      rows: present([
        ['Name', info.name],
        ['Status', info.status],
        ['Attempt', info.attempt],
        ['Tasks', info.num_tasks === undefined ? null : formatCount(info.num_tasks)],
        ['Jobs', (info.job_ids ?? []).join(', ')],
        ['Submitted', info.submitted_at ? formatTime(info.submitted_at) : null],
        ['Completed', info.completed_at ? formatTime(info.completed_at) : null],
        ['Wall time', elapsed(info.submitted_at, info.completed_at) === null
          ? null : formatDuration(elapsed(info.submitted_at, info.completed_at))],
      ]),
    },
  ];
  if (info.failure_reason) sections.push({ heading: 'Failure', text: info.failure_reason });
  const metrics = metricRows(info.metrics);
  if (metrics.length) sections.push({ heading: 'Metrics', rows: metrics });
  if (info.call_site) sections.push({ heading: 'Call site', text: info.call_site });
  return sections;
}

function operatorDetails(info) {
  const sections = [
    {
      heading: 'Summary',
      rows: present([
        ['RDD', info.rdd_id],
        ['Name', info.name],
        ['Scope', info.scope_name],
        ['Partitions', info.num_partitions === undefined ? null : formatCount(info.num_partitions)],
        ['Cached', info.cached === undefined ? null : (info.cached ? 'yes' : 'no')],
      ]),
    },
  ];
  const python = info.python_operators ?? [];
  if (python.length) {
    sections.push({
      heading: 'Python operators',
      columns: ['Operator', 'Call site'],
      table: python.map((op) => [op?.name ?? '?', op?.call_site ?? '']),
    });
  }
  if (info.call_site) sections.push({ heading: 'Call site', text: info.call_site });
  return sections;
}

function datasetDetails(info) {
  return [
    {
      heading: 'Summary',
      rows: present([
        ['Path', info.path],
        ['Format', info.format],
        ['Direction', (info.directions ?? []).join(', ')],
        ['Size', info.size_bytes === null || info.size_bytes === undefined ? null : formatBytes(info.size_bytes)],
      ]),
    },
  ];
}

function jobDetails(info) {
  const sections = [{
    heading: 'Summary',
    rows: present([
      ['Job', info.job_id],
      ['Status', info.status],
      ['Description', info.description],
      ['Job group', info.job_group],
      ['Submitted', info.submitted_at ? formatTime(info.submitted_at) : null],
      ['Completed', info.completed_at ? formatTime(info.completed_at) : null],
    ]),
  }];
  if (info.error) sections.push({ heading: 'Error', text: info.error });
  if (info.call_site) sections.push({ heading: 'Call site', text: info.call_site });
  return sections;
}

function captureDetails(info) {
  const files = info.files ?? [];
  const read = files.length ? [{ heading: files.length === 1 ? 'File read' : `Files read (${formatCount(files.length)})`, text: files.join('\n') }] : [];
  return [{
    heading: 'Summary',
    rows: present([
      ['Capture point', info.capture_id],
      ['Kind', info.capture_kind],
      ['Stage', info.stage_id],
      ['RDD', info.rdd_id],
      ['Rows', info.rows === null || info.rows === undefined ? null : formatCount(info.rows)],
      ['Size', info.bytes === null || info.bytes === undefined ? null : formatBytes(info.bytes)],
      ['Lineage', lineageState(info)],
    ]),
  }, ...read, ...(info.not_captured ? [{ heading: 'Not captured', text: info.not_captured }] : [])];
}

/** Whether a capture point's record lineage is all there: not captured (the action ran plain),
 * incomplete (tables missing) or complete. */
function lineageState(info) {
  if (info.not_captured) return 'not captured (the action ran without record lineage)';
  return info.lineage_complete === false ? 'incomplete (tables missing)' : 'complete';
}

function applicationDetails(info) {
  return [{
    heading: 'Summary',
    rows: present([['Application', info.app_id], ['Name', info.name], ['User', info.user], ['Status', info.status]]),
  }];
}

/**
 * The capture points inside a node (a job, stage or operator) with their row counts, from the zoom
 * tree; null when it holds none.
 */
export function capturePointsSection(tree, id) {
  const rows = [];
  const stack = [...(tree.childrenOf.get(String(id)) ?? [])];
  while (stack.length) {
    const child = stack.shift();
    const node = tree.nodes.get(child);
    if (node?.kind === 'capture') {
      const info = node.data ?? {};
      rows.push([node.label || info.capture_id, info.capture_kind ?? '', info.rows === undefined || info.rows === null ? '' : formatCount(info.rows)]);
    }
    stack.push(...(tree.childrenOf.get(child) ?? []));
  }
  return rows.length ? { heading: 'Capture points', columns: ['Capture point', 'Kind', 'Rows'], table: rows } : null;
}

/**
 * The node panel's "Sample records" section from the API's capture-points/sample/ answer: the
 * records as kept (input lines, Parquet rows, values), or why a point keeps only their ids.
 */
export function sampleSection(sample) {
  if (!sample?.kept) return { heading: 'Sample records', text: sample?.note || 'No values are kept here.' };
  if (!sample.records.length) return { heading: 'Sample records', text: 'This capture point holds no records.' };
  return {
    heading: 'Sample records',
    columns: ['Record', 'Value'],
    table: sample.records.map((r) => [recordIdCell(r), r.text]),
  };
}

/** A collapsed node's "Holds" section: how many nodes of each kind it hides. */
function hiddenSection(hidden) {
  const rows = Object.entries(hidden ?? {}).filter(([, n]) => n > 0).map(([kind, n]) => [kind, formatCount(n)]);
  return rows.length ? [{ heading: 'Holds', rows }] : [];
}

/**
 * Describe a node for the side panel.
 *
 * Args: `node` is a graph API node ({id, kind, label, data}).
 * Returns {title, kind, sections}; a section has a heading and one of rows ([[label, value]]),
 * table (with columns) or text (preformatted).
 */
export function nodeDetails(node) {
  const info = node?.data ?? {};
  const kind = node?.kind ?? 'unknown';
  let sections;
  if (kind === 'stage') sections = stageDetails(info);
  else if (kind === 'operator') sections = operatorDetails(info);
  else if (kind === 'dataset') sections = datasetDetails(info);
  else if (kind === 'job') sections = jobDetails(info);
  else if (kind === 'capture') sections = captureDetails(info);
  else if (kind === 'application') sections = applicationDetails(info);
  else sections = [{ heading: 'Data', text: JSON.stringify(info, null, 2) }];
  if (info.hidden) sections = [...sections, ...hiddenSection(info.hidden)];
  return { title: node?.label || String(node?.id ?? ''), kind, sections };
}

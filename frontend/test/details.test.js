import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { capturePointsSection, formatMetric, metricLabel, metricRows, nodeDetails, sampleSection } from '../src/details.js';
import { zoomTree } from '../src/zoom.js';
import { fixture } from './helpers.js';

const graph = fixture('wordcount_graph.json');
const node = (id) => graph.nodes.find((n) => n.id === id);
const section = (details, heading) => details.sections.find((s) => s.heading === heading);

describe('nodeDetails', () => {
  it('describes a stage with its facts, metrics table and call site', () => {
    const details = nodeDetails(node('stage:0'));
    assert.equal(details.title, 'Stage 0: reduceByKey at wordcount.py:14');
    assert.equal(details.kind, 'stage');
    const facts = Object.fromEntries(section(details, 'Summary').rows);
    assert.equal(facts.Status, 'succeeded');
    assert.equal(facts.Jobs, '0');
    assert.equal(facts['Wall time'], '2.25 s');
    const metrics = section(details, 'Metrics').rows;
    assert.deepEqual(metrics[0], ['Tasks', '2']);
    assert.ok(metrics.some(([label, value]) => label === 'Input bytes' && value === '1.5 MiB'));
    assert.ok(metrics.some(([label, value]) => label === 'Executor run time' && value === '1.23 s'));
    assert.match(section(details, 'Call site').text, /wordcount\.py:14/);
  });

  it('describes an operator with its Python operators', () => {
    const details = nodeDetails(node('op:0:2'));
    const python = section(details, 'Python operators');
    assert.deepEqual(python.columns, ['Operator', 'Call site']);
    assert.deepEqual(python.table, [['flatMap', 'wordcount.py:12'], ['map', 'wordcount.py:13']]);
    const facts = Object.fromEntries(section(details, 'Summary').rows);
    assert.equal(facts.Scope, 'reduceByKey');
    assert.equal(facts.Cached, 'no');
  });

  it('describes a dataset with its path and size', () => {
    const facts = Object.fromEntries(section(nodeDetails(node('dataset:1')), 'Summary').rows);
    assert.equal(facts.Path, 'file:/data/words.txt');
    assert.equal(facts.Size, '1.5 MiB');
    assert.equal(facts.Direction, 'read');
    const written = Object.fromEntries(section(nodeDetails(node('dataset:2')), 'Summary').rows);
    assert.equal(written.Size, undefined, 'an unknown size is left out');
  });

  it('omits absent facts and sections and survives missing data', () => {
    const details = nodeDetails({ id: 'stage:9', kind: 'stage', label: '', data: {} });
    assert.equal(details.title, 'stage:9');
    assert.deepEqual(section(details, 'Summary').rows, []);
    assert.equal(section(details, 'Metrics'), undefined);
    assert.equal(nodeDetails({ id: 'x', kind: 'other', data: { a: 1 } }).sections[0].text, '{\n  "a": 1\n}');
    assert.equal(nodeDetails(undefined).kind, 'unknown');
  });
});

describe('metrics', () => {
  it('formats metrics by unit', () => {
    assert.equal(formatMetric('shuffle_write_bytes', 20480), '20 KiB');
    assert.equal(formatMetric('executor_cpu_time_ns', 2_500_000_000), '2.50 s');
    assert.equal(formatMetric('memory_bytes_spilled', 0), '0 B');
    assert.equal(formatMetric('output_records', 1200), '1,200');
    assert.equal(formatMetric('tasks', null), '—');
  });

  it('orders known metrics first and humanizes unknown ones', () => {
    const rows = metricRows({ zeta_count: 1, output_records: 2, tasks: 3 });
    assert.deepEqual(rows.map(([label]) => label), ['Tasks', 'Output records', 'Zeta count']);
    assert.equal(metricLabel('peak_execution_memory'), 'Peak execution memory');
  });
});

describe('the capture panel sections', () => {
  const tree = zoomTree(fixture('zoom_graph.json'));

  it('lists the capture points a stage holds, through its operators, with their rows', () => {
    const held = capturePointsSection(tree, 'stage:0');
    assert.deepEqual(held.columns, ['Capture point', 'Kind', 'Rows']);
    assert.deepEqual(held.table.map((row) => [row[0], row[2]]), [['input s0-input', '1,000'], ['combiner s0-combiner', '420']]);
    assert.equal(capturePointsSection(tree, 'job:0').table.length, 4);
    assert.equal(capturePointsSection(tree, 'op:0:1'), null);
  });

  it('says which files an input point read', () => {
    const input = nodeDetails({ id: 'capture:i', kind: 'capture', label: 'textFile events.txt',
      data: { capture_id: 'r/0001-input-textFile', capture_kind: 'input', files: ['file:/data/events.txt', 'file:/data/more.txt'] } });
    const files = input.sections.find((s) => s.heading.startsWith('Files read'));
    assert.equal(files.heading, 'Files read (2)');
    assert.equal(files.text, 'file:/data/events.txt\nfile:/data/more.txt');
    const reducer = nodeDetails({ id: 'capture:r', kind: 'capture', data: { capture_id: 'r/0003-reducer-x', capture_kind: 'reducer', files: [] } });
    assert.equal(reducer.sections.some((s) => s.heading.startsWith('File')), false);
  });

  it('says an output was not captured, and why', () => {
    const reason = 'DataFrame.collect ran plain: record-level lineage capture does not support FlatMapGroupsInPandas()';
    const point = nodeDetails({ id: 'capture:n', kind: 'capture',
      data: { capture_id: 'r/0004-output-collect-not-captured', capture_kind: 'output', rows: 0, not_captured: reason } });
    const summary = point.sections.find((s) => s.heading === 'Summary');
    assert.equal(summary.rows.find(([name]) => name === 'Lineage')[1], 'not captured (the action ran without record lineage)');
    assert.equal(point.sections.find((s) => s.heading === 'Not captured').text, reason);
    const captured = nodeDetails({ id: 'capture:o', kind: 'capture', data: { capture_id: 'r/0005-output-collect', capture_kind: 'output', not_captured: '' } });
    assert.equal(captured.sections.some((s) => s.heading === 'Not captured'), false);
  });

  it('shows kept records as a table, and why a point keeps none', () => {
    const kept = sampleSection({ kept: true, records: [{ record_id: 4294967296, text: 'ERROR disk' }], note: '' });
    assert.deepEqual(kept.table, [[{ text: 'partition 1 · row 0', title: 'record id 4294967296' }, 'ERROR disk']]);
    assert.equal(sampleSection({ kept: true, records: [], note: '' }).text, 'This capture point holds no records.');
    const note = 'only record ids are kept at this shuffle point; a trace through it computes its records\' values';
    assert.equal(sampleSection({ kept: false, records: [], note }).text, note);
  });
});

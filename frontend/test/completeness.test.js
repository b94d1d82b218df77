import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { describeReasons, incompleteLineageLines } from '../src/completeness.js';

const DISK_FULL = 'OSError: [Errno 28] No space left on device';
const point = (captureId, missing) => ({
  capture_id: captureId,
  kind: 'reducer',
  lineage_complete: missing.length === 0,
  missing_table_count: missing.length,
  missing_tables: missing,
});
const app = (missingTableCount) => ({
  app_id: 'local-1',
  lineage_complete: missingTableCount === 0,
  missing_table_count: missingTableCount,
});

describe('incompleteLineageLines', () => {
  it('says nothing for complete lineage, or an application from before the field existed', () => {
    assert.deepEqual(incompleteLineageLines(app(0), { count: 0, results: [] }), []);
    assert.deepEqual(incompleteLineageLines({ app_id: 'local-1' }, []), []);
    assert.deepEqual(incompleteLineageLines(undefined, []), []);
  });

  it('names each capture point with missing tables, how many, and why', () => {
    const page = {
      count: 2,
      results: [
        point('cp-reduce-3', [{ partition: 0, reason: DISK_FULL }, { partition: 4, reason: DISK_FULL }]),
        point('cp-join-5', [{ partition: 1, reason: 'PermissionError: /lineage' }]),
      ],
    };
    assert.deepEqual(incompleteLineageLines(app(3), page), [
      `Record-level lineage incomplete: 2 tables of capture point cp-reduce-3 could not be written: ${DISK_FULL}.`,
      'Record-level lineage incomplete: 1 table of capture point cp-join-5 could not be written: '
        + 'PermissionError: /lineage.',
    ]);
  });

  it('counts the tables of each reason when a point has several, and notes a missing reason', () => {
    const missing = [
      { partition: 0, reason: DISK_FULL },
      { partition: 1, reason: 'store gone' },
      { partition: 2, reason: DISK_FULL },
    ];
    assert.equal(describeReasons(missing), `${DISK_FULL} (2 tables); store gone (1 table)`);
    assert.equal(describeReasons([{ partition: 0, reason: '  ' }]), 'no reason given');
  });

  it('sums up the capture points a page does not hold', () => {
    const page = { count: 3, results: [point('cp-a', [{ partition: 0, reason: 'x' }])] };
    const lines = incompleteLineageLines(app(1201), page);
    assert.equal(lines.length, 2);
    assert.equal(
      lines[1],
      'Record-level lineage incomplete: 1,200 more tables of 2 other capture points could not be written.',
    );
  });

  it('still says how many tables are missing when the capture points could not be read', () => {
    assert.deepEqual(incompleteLineageLines(app(7), []), [
      'Record-level lineage incomplete: 7 tables could not be written; traces may miss records.',
    ]);
  });
});

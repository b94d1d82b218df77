import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { baseName, formatBytes, formatCount, formatDuration, formatTime, shortCallSites, shorten } from '../src/format.js';

describe('format helpers', () => {
  it('formats bytes in binary units', () => {
    assert.equal(formatBytes(0), '0 B');
    assert.equal(formatBytes(1023), '1023 B');
    assert.equal(formatBytes(1536), '1.5 KiB');
    assert.equal(formatBytes(1572864), '1.5 MiB');
    assert.equal(formatBytes(200 * 1024 ** 3), '200 GiB');
    assert.equal(formatBytes(null), '—');
  });

  it('formats counts with separators', () => {
    assert.equal(formatCount(1234567), '1,234,567');
    assert.equal(formatCount(0), '0');
    assert.equal(formatCount(undefined), '—');
  });

  it('formats durations from milliseconds to hours', () => {
    assert.equal(formatDuration(850), '850 ms');
    assert.equal(formatDuration(1234), '1.23 s');
    assert.equal(formatDuration(12345), '12.3 s');
    assert.equal(formatDuration(245000), '4 min 05 s');
    assert.equal(formatDuration(3730000), '1 h 02 min');
    assert.equal(formatDuration(null), '—');
  });

  it('formats ISO times in UTC and keeps unparseable text', () => {
    assert.equal(formatTime('2025-11-21T12:00:00Z'), '2025-11-21 12:00:00 UTC');
    assert.equal(formatTime('2025-11-21T13:00:00+01:00'), '2025-11-21 12:00:00 UTC');
    assert.equal(formatTime(null), '—');
    assert.equal(formatTime('yesterday'), 'yesterday');
  });

  it('takes the last segment of paths and URIs', () => {
    assert.equal(baseName('hdfs://nn:8020/data/words.txt'), 'words.txt');
    assert.equal(baseName('/out/counts/'), 'counts');
    assert.equal(baseName('warehouse.sales'), 'warehouse.sales');
    assert.equal(baseName(''), '');
  });

  it('shortens in the middle', () => {
    assert.equal(shorten('short', 10), 'short');
    const cut = shorten('abcdefghijklmnopqrstuvwxyz', 11);
    assert.equal(cut.length, 11);
    assert.equal(cut, 'abcde…vwxyz');
  });
});

describe('call sites', () => {
  it('keep the file name of a call site, not its folders', () => {
    assert.equal(shortCallSites('Stage 3: reduceByKey at /home/ana/jobs/word_count.py:65'), 'Stage 3: reduceByKey at word_count.py:65');
    assert.equal(shortCallSites('collect at C:\\jobs\\etl.py:9'), 'collect at etl.py:9');
    assert.equal(shortCallSites('parquet at NativeMethodAccessorImpl.java:0'), 'parquet at NativeMethodAccessorImpl.java:0');
    assert.equal(shortCallSites('Stage 7'), 'Stage 7');
  });
});

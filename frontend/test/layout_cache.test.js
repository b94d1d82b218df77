import assert from 'node:assert/strict';
import { test } from 'node:test';

import { toElements } from '../src/graph.js';
import { LAYOUTS_STORED, keepLayout, layoutKey, readLayout } from '../src/layout_cache.js';

/** The Web Storage interface over a Map (what window.localStorage offers), optionally full. */
class MemoryStorage {
  constructor({ full = false } = {}) { this.items = new Map(); this.full = full; }
  getItem(key) { return this.items.has(key) ? this.items.get(key) : null; }
  setItem(key, value) { if (this.full) throw new Error('QuotaExceededError'); this.items.set(key, String(value)); }
  removeItem(key) { this.items.delete(key); }
}

const graph = (label = 'Stage 1: map at job.py:3') => ({
  nodes: [
    { id: 'job:0', kind: 'job', label: 'Job 0', parent: null },
    { id: 'stage:0', kind: 'stage', label: 'Stage 0: textFile at job.py:2', parent: 'job:0' },
    { id: 'stage:1', kind: 'stage', label, parent: 'job:0' },
  ],
  edges: [{ id: 'stage:0->stage:1', source: 'stage:0', target: 'stage:1', kind: 'stage' }],
});

test('the key is the drawing: the same elements in any order give it, another label or edge another', () => {
  const elements = toElements(graph());
  assert.equal(layoutKey(elements), layoutKey([...elements].reverse()));
  assert.notEqual(layoutKey(elements), layoutKey(toElements(graph('Stage 1: a longer label at job.py:3'))));
  const unlinked = toElements({ ...graph(), edges: [] });
  assert.notEqual(layoutKey(elements), layoutKey(unlinked));
});

test('positions and the measured boxes come back as kept, under their key only', () => {
  const storage = new MemoryStorage();
  const positions = new Map([['stage:0', { x: 10.04, y: -3 }], ['stage:1', { x: 250.5, y: 40.25 }]]);
  const box = { x1: 0, y1: -20, x2: 300, y2: 60, w: 300, h: 80 };
  keepLayout(storage, 'k1', positions, { box, job: box });
  const kept = readLayout(storage, 'k1');
  assert.deepEqual([...kept.positions], [['stage:0', { x: 10, y: -3 }], ['stage:1', { x: 250.5, y: 40.3 }]]);
  assert.deepEqual(kept.box, box);
  assert.equal(readLayout(storage, 'k2'), null);
  assert.equal(readLayout(null, 'k1'), null);
});

test('past the limit the least recently kept layout is forgotten; a full storage keeps nothing, quietly', () => {
  const storage = new MemoryStorage();
  const one = new Map([['a', { x: 1, y: 2 }]]);
  for (let i = 0; i <= LAYOUTS_STORED; i += 1) keepLayout(storage, `k${i}`, one);
  assert.equal(readLayout(storage, 'k0'), null);
  assert.notEqual(readLayout(storage, 'k1'), null);
  assert.notEqual(readLayout(storage, `k${LAYOUTS_STORED}`), null);
  const full = new MemoryStorage({ full: true });
  keepLayout(full, 'k', one);
  assert.equal(readLayout(full, 'k'), null);
  storage.setItem('lineage-layout:bad', '{not json');
  assert.equal(readLayout(storage, 'bad'), null);
});

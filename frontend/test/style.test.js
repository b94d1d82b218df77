import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { graphStyle, labelHeight, labelWidth } from '../src/style.js';

describe('graph style', () => {
  it('sizes nodes to their longest label line and line count', () => {
    assert.equal(labelWidth(''), 80);
    assert.ok(labelWidth('x'.repeat(40)) > labelWidth('x'.repeat(20)));
    assert.equal(labelWidth('short\n' + 'x'.repeat(40)), labelWidth('x'.repeat(40)));
    assert.ok(labelHeight('a\nb\nc') > labelHeight('a'));
  });

  it('draws datasets with a shape distinct from operators and stages', () => {
    const style = graphStyle();
    const shapeOf = (selector) => style.find((rule) => rule.selector === selector)?.style.shape;
    assert.equal(shapeOf('node.dataset'), 'barrel');
    assert.equal(shapeOf('node.operator'), 'round-rectangle');
    const fill = (selector) => style.find((rule) => rule.selector === selector)?.style['background-color'];
    assert.notEqual(fill('node.dataset'), fill('node.operator'));
    assert.notEqual(fill('node.dataset-written'), fill('node.dataset'));
  });
});

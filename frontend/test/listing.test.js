import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  applicationRow, applicationsApiUrl, listStateQuery, pageOfLink, parseListState, rangeSummary,
} from '../src/listing.js';
import { fixture } from './helpers.js';

describe('list state', () => {
  it('reads page, status and search from the query string and drops bad values', () => {
    assert.deepEqual(parseListState('?page=3&status=failed&search=%20etl%20&team=data-eng'),
      { page: 3, status: 'failed', search: 'etl', team: 'data-eng' });
    assert.deepEqual(parseListState('?page=0&status=bogus&team=Bad%20Team'), { page: 1, status: '', search: '', team: '' });
    assert.deepEqual(parseListState(''), { page: 1, status: '', search: '', team: '' });
  });

  it('writes only non-default values back', () => {
    assert.equal(listStateQuery({ page: 1, status: '', search: '' }), '');
    assert.equal(listStateQuery({ page: 2, status: 'running', search: 'a b' }), '?page=2&status=running&search=a+b');
    assert.equal(listStateQuery({ page: 1, status: '', search: '', team: 'ops' }), '?team=ops');
  });

  it('builds the API URL for relative and absolute bases', () => {
    const state = { page: 2, status: 'failed', search: 'wc' };
    assert.equal(applicationsApiUrl('/api/v1/applications/', state), '/api/v1/applications/?page=2&status=failed&search=wc');
    assert.equal(applicationsApiUrl('/api/v1/applications/?page_size=20&page=9', { page: 1, status: '', search: '' }),
      '/api/v1/applications/?page_size=20');
    assert.equal(applicationsApiUrl('/api/v1/applications/?team=old', { page: 1, status: '', search: '', team: 'new' }),
      '/api/v1/applications/?team=new');
    assert.equal(applicationsApiUrl('http://h:8000/api/v1/applications/', state),
      'http://h:8000/api/v1/applications/?page=2&status=failed&search=wc');
  });

  it('reads page numbers from DRF links', () => {
    const page = fixture('applications_page.json');
    assert.equal(pageOfLink(page.next), 2);
    assert.equal(pageOfLink(page.previous), null);
    assert.equal(pageOfLink('http://testserver/api/v1/applications/?status=failed'), 1);
  });

  it('summarises the range shown', () => {
    assert.equal(rangeSummary(0, 1, 0, true), 'No applications');
    assert.equal(rangeSummary(230, 2, 50, false), 'Showing 51–100 of 230');
    assert.equal(rangeSummary(230, 5, 30, true), 'Showing 201–230 of 230');
  });
});

describe('applicationRow', () => {
  const [wordcount, etl, idle] = fixture('applications_page.json').results;

  it('links to the page URL the API gives and formats cells as text', () => {
    const row = applicationRow(wordcount);
    assert.equal(row.href, '/applications/local-1763731200000/');
    assert.equal(row.cells.duration, '9.50 s');
    assert.equal(row.cells.started_at, '2025-11-21 12:00:00 UTC');
    assert.equal(row.cells.jobs, '1');
    assert.equal(row.cells.spark, '4.0.1 · local[*]');
  });

  it('shows failed jobs and keeps names as plain text', () => {
    const row = applicationRow(etl);
    assert.equal(row.cells.jobs, '7 (2 failed)');
    assert.equal(row.cells.name, 'nightly <etl>');
    assert.equal(row.status, 'failed');
  });

  it('survives a running application without times', () => {
    const row = applicationRow(idle);
    assert.equal(row.cells.started_at, '—');
    assert.equal(row.cells.duration, '—');
    assert.equal(applicationRow({ app_id: 'a b' }).href, '/applications/a%20b/');
  });
});

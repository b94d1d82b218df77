// Entry point: mount the page whose root element the Django template rendered.

import { mountApplicationPage } from './application.js';
import { mountApplicationsPage } from './applications.js';
import { mountDiffPage } from './diff.js';
import { mountHistoryPage } from './history.js';
import { mountHomePage } from './home.js';
import { mountPipelinePage } from './pipeline.js';
import { mountProvenanceGraphsPage, mountProvenancePage } from './provenance.js';
import { mountQuestionPage } from './question.js';

// The root element's id each template renders -> the function that draws that page into it.
const PAGES = {
  'home-page': mountHomePage,
  'applications-page': mountApplicationsPage,
  'application-page': mountApplicationPage,
  'pipeline-page': mountPipelinePage,
  'question-page': mountQuestionPage,
  'diff-page': mountDiffPage,
  'history-page': mountHistoryPage,
  'provenance-graphs-page': mountProvenanceGraphsPage,
  'provenance-page': mountProvenancePage,
};

function start() {
  for (const [id, mount] of Object.entries(PAGES)) {
    const root = document.getElementById(id);
    if (root) mount(root);
  }
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();

// Entry point: mount the page whose root element the Django template rendered.

import { mountApplicationPage } from './application.js';
import { mountApplicationsPage } from './applications.js';
import { mountPipelinePage } from './pipeline.js';

function start() {
  const list = document.getElementById('applications-page');
  if (list) mountApplicationsPage(list);
  const graph = document.getElementById('application-page');
  if (graph) mountApplicationPage(graph);
  const pipeline = document.getElementById('pipeline-page');
  if (pipeline) mountPipelinePage(pipeline);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();

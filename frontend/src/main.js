// Entry point: mount the page whose root element the Django template rendered.

import { mountApplicationPage } from './application.js';
import { mountApplicationsPage } from './applications.js';

function start() {
  const list = document.getElementById('applications-page');
  if (list) mountApplicationsPage(list);
  const graph = document.getElementById('application-page');
  if (graph) mountApplicationPage(graph);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();

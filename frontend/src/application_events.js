// What the application page does on a tap, a click, a key: each handler asks the ApplicationView
// (application_view.js) to change its zoom state or selection.

import { onNodeTap, onSelectionChange } from './taps.js';

/** Taps on a node pick it (and a double tap zooms it); a tap on the background unpicks. */
function listenToTaps(view) {
  const { cy } = view;
  onNodeTap(cy, (node, double) => {
    view.showDetails(node);
    const action = double ? view.zoomAction(node) : null;
    if (action) view.zoom(node, action.direction);
  });
  cy.on('tap', (event) => {
    if (event.target === cy) view.unselect();
  });
}

/** The toolbar: levels, skipped stages, fit, and the zoom of the selected nodes. */
function listenToToolbar(view, { levelButtons, showSkipped, fit, zoomSelected }) {
  const { cy } = view;
  for (const [name, button] of Object.entries(levelButtons)) {
    button.addEventListener('click', () => view.showLevel(name));
  }
  showSkipped.addEventListener('change', () => view.toggleSkipped());
  fit.addEventListener('click', () => cy.animate({ fit: { padding: 24 } }, { duration: 200 }));
  onSelectionChange(cy, (some) => {
    zoomSelected.in.disabled = !some;
    zoomSelected.out.disabled = !some;
  });
  for (const [direction, button] of Object.entries(zoomSelected)) {
    button.addEventListener('click', () => view.zoomSelected(direction));
  }
}

/** Find a node: the drawn node of that name (or the first whose name holds the text) is picked and centred. */
function listenToFinder(view, { finder, find, panel }) {
  const { cy } = view;
  finder.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = find.value.trim().toLowerCase();
    const matches = cy.nodes().filter((node) => String(node.data('title')).toLowerCase().includes(text));
    const node = matches.filter((n) => String(n.data('title')).toLowerCase() === text)[0] ?? matches[0];
    if (!text || !node) {
      find.setCustomValidity('No node drawn here has that name');
      find.reportValidity();
      return;
    }
    find.setCustomValidity('');
    cy.elements().unselect();
    node.select();
    cy.center(node);
    view.showDetails(node);
    panel.querySelector('button, a')?.focus();
  });
  find.addEventListener('input', () => find.setCustomValidity(''));
}

/** Wires the page's parts (application_toolbar.pageParts) to `view`. */
export function listen(view, parts) {
  listenToTaps(view);
  listenToToolbar(view, parts);
  listenToFinder(view, parts);
}

// The application page's minimap (cytoscape-navigator): the whole graph in the corner, the view as
// a box to drag.

const MINIMAP_DELAY_MS = 250;

/** Makes the minimap in #minimap once the graph is painted: making it measures the whole graph (a
 * quarter of a second for a 500-stage application) and it is not what the page opens on. Two
 * frames: the page's first drawing is on screen and idle (application_view.js) before it starts. */
export function startMinimap(cy) {
  requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => {
    const minimapNav = cy.navigator({ container: '#minimap', removeCustomContainer: false, rerenderDelay: 300 });
    // cytoscape-navigator redraws its thumbnail (a full cy.png()) on the *first* render after a
    // change, inside that frame: ~150 ms on every zoom of a 5,000-operator graph. Its handler is
    // moved behind a trailing debounce, so the thumbnail follows once the graph is on screen.
    // (_onRenderHandler is the extension's own field, in the version package-lock.json pins.)
    if (minimapNav?._onRenderHandler) {
      const thumbnail = minimapNav._onRenderHandler;
      let timer = null;
      const later = () => {
        clearTimeout(timer);
        timer = setTimeout(thumbnail, MINIMAP_DELAY_MS);
      };
      cy.offRender(thumbnail);
      cy.onRender(later);
      // The extension draws its first thumbnail on a render; when the graph is already painted and
      // idle there is none to come (a loaded machine finishes the first drawing before this runs).
      later();
    }
  }, 0)));
}

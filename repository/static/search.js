// Search pages: on a narrow screen the facets start folded, so the results come first; without this script (or on
// a wide screen) they stay open. Nothing else depends on it.
(function () {
  'use strict';
  var box = document.querySelector('[data-facets]');
  if (box && window.matchMedia('(max-width: 52rem)').matches) {
    box.open = false;
  }
})();

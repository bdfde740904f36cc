// The record page without reloads: a citation style chosen in the picker is fetched from the API (text/x-bibliography)
// and shown in place; a file's "Preview" link shows it in the preview area. Without scripts both are links and a GET
// form that reload the page, which reads the same.
"use strict";
(function () {
  var form = document.querySelector("form.style-form[data-citation]");
  var citation = document.getElementById("citation");
  if (form && citation && window.fetch) {
    var select = form.querySelector("select[name=style]");
    var status = document.querySelector('[data-copy-status="citation"]');
    form.querySelector("button[type=submit]").remove();  // the choice applies at once
    select.addEventListener("change", function () {
      var style = select.value;
      var url = form.getAttribute("data-citation") + "?style=" + encodeURIComponent(style);
      citation.setAttribute("aria-busy", "true");
      fetch(url, {headers: {Accept: "text/x-bibliography"}, credentials: "same-origin"}).then(function (response) {
        return response.text().then(function (text) {
          if (!response.ok) throw new Error("The citation could not be rendered in this style.");
          citation.textContent = text;
          if (status) status.textContent = "";
          var address = new URL(window.location.href);
          address.searchParams.set("style", style);
          window.history.replaceState(null, "", address.toString());
        });
      }).catch(function (error) {
        if (status) status.textContent = error.message;
      }).then(function () {
        citation.removeAttribute("aria-busy");
      });
    });
  }

  var area = document.getElementById("preview");
  if (!area) return;
  var heading = area.querySelector(".preview-name");
  function show(link) {
    var key = link.getAttribute("data-preview");
    var kind = link.getAttribute("data-kind");
    var old = area.querySelector("iframe, img");
    var shown;
    if (kind === "image") {
      shown = document.createElement("img");
      shown.className = "preview-image";
      shown.alt = "Preview of " + key;
      shown.src = key === area.getAttribute("data-thumb-key") ? area.getAttribute("data-thumb") : link.getAttribute("data-file");
    } else {
      shown = document.createElement("iframe");
      shown.className = "preview-frame preview-" + kind;
      shown.title = "Preview of " + key;
      shown.src = link.getAttribute("data-frame");
    }
    old.replaceWith(shown);
    heading.textContent = key;
    var address = new URL(window.location.href);
    address.searchParams.set("preview", key);
    address.hash = "preview";
    window.history.replaceState(null, "", address.toString());
    area.scrollIntoView({block: "nearest"});
  }
  document.querySelectorAll("a.preview-link[data-preview]").forEach(function (link) {
    link.addEventListener("click", function (event) {
      event.preventDefault();
      show(link);
    });
  });
})();

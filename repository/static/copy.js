// Copy buttons: <button data-copy="ID" hidden> copies the text of the element ID (shown only when this runs; without
// scripts the text stays selectable). A file of its own: the pages' Content-Security-Policy allows no inline script.
"use strict";
document.querySelectorAll("button[data-copy]").forEach(function (button) {
  var id = button.getAttribute("data-copy");
  var source = document.getElementById(id);
  var status = document.querySelector('[data-copy-status="' + id + '"]');
  if (!source) return;
  function say(text) { if (status) status.textContent = text; }
  function selectText() {
    var range = document.createRange();
    range.selectNodeContents(source);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }
  button.hidden = false;
  button.addEventListener("click", function () {
    var text = source.textContent.trim();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { say("Copied."); },
        function () { selectText(); say("Selected: press Ctrl+C (⌘C) to copy."); });
    } else {
      selectText();
      say(document.execCommand && document.execCommand("copy") ? "Copied." : "Selected: press Ctrl+C (⌘C) to copy.");
    }
  });
});

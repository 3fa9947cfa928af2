// The Cite block's "Copy BibTeX" buttons: shown only where the page can copy (the <pre> stays
// selectable without them), each copies its entry and says so.
(function () {
  "use strict";
  if (!navigator.clipboard) return;
  document.querySelectorAll("button.copy-bibtex[data-copy]").forEach(function (button) {
    var entry = document.getElementById(button.getAttribute("data-copy"));
    if (!entry) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(entry.textContent).then(function () {
        button.textContent = "Copied";
      }, function () {
        button.textContent = "Select the text to copy";
      });
    });
  });
})();

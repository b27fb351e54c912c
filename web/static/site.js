// Progressive enhancement only: every page reads fully without this script.
// Copy buttons (digest, citation in three formats); a copied citation gets today's access date,
// which the server never adds (pinned pages never change). Where the registry has no public base URL,
// the citations to copy were made under a placeholder origin (the button's data-origin): the address
// this page is read at (location.origin) takes its place, so a copied permalink is absolute.
(function () {
  "use strict";
  function today() { return new Date().toISOString().slice(0, 10); }
  function accessed(kind, text) {
    var day = today();
    if (kind === "text") { return text.trim() + " Accessed " + day + "."; }
    if (kind === "bibtex") { return text.trim().replace(/\n\}\s*$/, ",\n  urldate = {" + day + "}\n}"); }
    if (kind === "csl") {
      try {
        var item = JSON.parse(text);
        var parts = day.split("-").map(Number);
        (Array.isArray(item) ? item : [item]).forEach(function (i) { i.accessed = { "date-parts": [parts] }; });
        return JSON.stringify(item, null, 2);
      } catch (e) { return text; }
    }
    return text;
  }
  function copy(button) {
    var text = button.getAttribute("data-copy");
    var from = button.getAttribute("data-copy-from");
    if (from) { text = document.getElementById(from).textContent; }
    var origin = button.getAttribute("data-origin");
    if (origin && text.indexOf(origin) >= 0) { text = text.split(origin).join(window.location.origin); }
    var kind = button.getAttribute("data-accessed");
    if (kind) { text = accessed(kind, text); }
    if (!navigator.clipboard) { return; }
    navigator.clipboard.writeText(text).then(function () {
      var label = button.textContent;
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = label; }, 1500);
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("button.copy").forEach(function (button) {
      button.hidden = false;
      button.addEventListener("click", function () { copy(button); });
    });
    document.querySelectorAll(".buttons[hidden]").forEach(function (p) { p.hidden = false; });
  });
})();

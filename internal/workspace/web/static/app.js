// Zero workspace: a little progressive enhancement. Every page works
// without it.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  // Show only the fields of the chosen kind of server.
  var radios = document.querySelectorAll("input[name=kind]");
  function showKind() {
    var kind = (document.querySelector("input[name=kind]:checked") || {}).value || "stdio";
    document.querySelectorAll("fieldset[data-kind]").forEach(function (fs) {
      fs.hidden = fs.dataset.kind.split(" ").indexOf(kind) < 0;
    });
  }
  radios.forEach(function (r) { r.addEventListener("change", showKind); });
  if (radios.length) showKind();

  // Ask before destructive actions.
  document.querySelectorAll("form[data-confirm]").forEach(function (f) {
    f.addEventListener("submit", function (e) {
      if (f.dataset.passkeyDone) return; // asked already, before the passkey
      if (!window.confirm(f.dataset.confirm)) e.preventDefault();
    });
  });

  // Copy a shown-once value.
  document.querySelectorAll("button[data-copy]").forEach(function (b) {
    b.addEventListener("click", function () {
      var text = document.getElementById(b.dataset.copy).textContent;
      navigator.clipboard.writeText(text).then(function () { b.textContent = "Copied"; });
    });
  });
});

// The overlay's one small script: hovering or tapping a block shows its features in the panel.
// Everything it shows is also in each badge's title; the page works without it.
(function () {
  "use strict";
  var card = document.getElementById("rpo-card");
  var sheet = document.getElementById("rpo-sheet");
  if (!card) return;
  var current = null;

  function row(table, name, value) {
    var tr = document.createElement("tr");
    var th = document.createElement("th");
    var td = document.createElement("td");
    th.textContent = name;
    td.textContent = value;
    tr.appendChild(th);
    tr.appendChild(td);
    table.appendChild(tr);
  }

  function show(mark) {
    if (mark === current) return;
    if (current) current.classList.remove("rpo-hl");
    current = mark;
    mark.classList.add("rpo-hl");
    var blocks;
    try { blocks = JSON.parse(mark.getAttribute("data-rpo-f") || "[]"); } catch (e) { blocks = []; }
    card.textContent = "";
    blocks.forEach(function (b) {
      var title = document.createElement("p");
      title.textContent = (b.kept ? "\u2713 kept: " : "\u2717 dropped: ") + (b.label || b.tag);
      title.style.fontWeight = "700";
      card.appendChild(title);
      var table = document.createElement("table");
      row(table, "tag", "<" + b.tag + ">");
      row(table, "score", b.score);
      if (b.element_score !== undefined) row(table, "element score", b.element_score);
      row(table, "words", String(b.words));
      row(table, "link density", Math.round(b.links * 100) + "%");
      row(table, "text / code", String(b.ratio));
      card.appendChild(table);
    });
    card.hidden = false;
  }

  document.addEventListener("mouseover", function (event) {
    var mark = event.target.closest && event.target.closest(".rpo-mark");
    if (mark) show(mark);
  });
  document.addEventListener("click", function (event) {
    var badge = event.target.closest && event.target.closest(".rpo-badge");
    var mark = event.target.closest && event.target.closest(".rpo-mark");
    if (badge) {
      event.preventDefault();
      if (sheet) sheet.open = true;
    }
    if (mark) show(mark);
  });
})();

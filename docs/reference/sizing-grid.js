// Sort and filter the sizing grid. No arithmetic: rows are compared by the values the build
// wrote into each figure's data-value attribute, or by their text.
(function () {
  "use strict";
  var table = document.querySelector(".sa-grid table");
  var input = document.getElementById("sa-grid-filter");
  var count = document.getElementById("sa-grid-count");
  if (!table || !input) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);

  function key(row, col) {
    var cell = row.cells[col];
    var fig = cell.querySelector(".sa-fig");
    var text = cell.textContent.trim();
    // a cell that is one figure sorts by its value; words with figures in them (the configuration at the
    // target: workers, requests in flight, GPUs) sort by their text, as any text cell
    if (fig && fig.textContent.trim() === text) { return { num: true, v: parseFloat(fig.getAttribute("data-value")) }; }
    return { num: false, v: text.toLowerCase() };
  }

  // Each header's text goes inside a button, so the keyboard (Tab, then Enter or Space) and
  // assistive technology can sort too; the button's click bubbles to the header, which also
  // takes mouse clicks anywhere in the cell. aria-sort on the header says the current order.
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "sa-sort";
    button.title = "Sort by this column";
    while (th.firstChild) { button.appendChild(th.firstChild); }
    th.appendChild(button);
    th.style.cursor = "pointer";
    th.addEventListener("click", function () {
      var asc = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      rows.sort(function (a, b) {
        var x = key(a, col), y = key(b, col);
        if (x.num !== y.num) { return x.num ? -1 : 1; }  // figures before text cells
        if (x.v === y.v) { return 0; }
        return (x.v < y.v) === asc ? -1 : 1;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });

  function filter() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (r) {
      var text = r.textContent.toLowerCase();
      var ok = words.every(function (w) { return text.indexOf(w) !== -1; });
      r.style.display = ok ? "" : "none";
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " rows";
  }
  input.addEventListener("input", filter);
  filter();
})();

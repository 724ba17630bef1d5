// pytest-omk HTML report: filter, sort and open the sample table. No network, no dependencies.
(function () {
  "use strict";
  var table = document.getElementById("samples");
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var filter = document.getElementById("filter");
  var outcome = document.getElementById("outcome-filter");
  var shown = document.getElementById("shown");

  function applyFilter() {
    var needle = filter.value.trim().toLowerCase();
    var wanted = outcome.value;
    var count = 0;
    rows.forEach(function (row) {
      var visible = (!needle || row.dataset.search.indexOf(needle) >= 0) &&
        (!wanted || row.dataset.outcome === wanted);
      row.hidden = !visible;
      if (visible) { count += 1; }
    });
    shown.textContent = count + " of " + rows.length + " samples";
  }

  function sortBy(column) {
    var th = headers[column];
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    var numeric = th.dataset.type === "num";
    headers.forEach(function (other) { other.setAttribute("aria-sort", "none"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var sorted = rows.slice().sort(function (a, b) {
      var x = a.cells[column].dataset.sort;
      var y = b.cells[column].dataset.sort;
      var order = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
      order = ascending ? order : -order;
      // Equal keys keep the report's order, whichever direction.
      return order !== 0 ? order : Number(a.dataset.index) - Number(b.dataset.index);
    });
    sorted.forEach(function (row) { body.appendChild(row); });
  }

  function toggle(row) {
    var panel = document.getElementById(row.getAttribute("aria-controls"));
    var opening = panel.hidden;
    document.querySelectorAll("section.detail").forEach(function (p) { p.hidden = true; });
    rows.forEach(function (r) {
      r.setAttribute("aria-expanded", "false");
      r.classList.remove("selected");
    });
    if (opening) {
      panel.hidden = false;
      row.setAttribute("aria-expanded", "true");
      row.classList.add("selected");
      panel.scrollIntoView({block: "nearest"});
    }
  }

  filter.addEventListener("input", applyFilter);
  outcome.addEventListener("change", applyFilter);
  headers.forEach(function (th, column) {
    th.querySelector("button").addEventListener("click", function () { sortBy(column); });
  });
  rows.forEach(function (row) {
    row.addEventListener("click", function () { toggle(row); });
    row.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        toggle(row);
      }
    });
  });
}());

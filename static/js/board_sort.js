// Sortable board columns: click a header to sort by it, again to reverse. The sorted column is
// highlighted and carries the direction arrow; empty cells always go last.
(function () {
  "use strict";
  document.querySelectorAll("table.board[data-board]").forEach((table) => {
    const headers = Array.from(table.tHead.rows[0].cells);
    const body = table.tBodies[0];
    headers.forEach((th, column) => {
      if (!th.dataset.sort) return;
      th.tabIndex = 0;
      th.classList.add("sortable");
      const activate = () => sortBy(column, th);
      th.addEventListener("click", activate);
      th.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); activate(); } });
    });

    function value(row, column, kind) {
      const cell = row.cells[column];
      if (!cell) return null;
      const raw = cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent.trim();
      if (raw === "" || raw === "None") return null;
      if (kind === "num") { const x = parseFloat(raw); return Number.isNaN(x) ? null : x; }
      return raw.toLowerCase();
    }

    function sortBy(column, th) {
      const kind = th.dataset.sort;
      // Scores start high-to-low, names and ranks low-to-high.
      const first = kind === "num" && column > 0 ? "desc" : "asc";
      const dir = th.classList.contains("sorted") ? (th.dataset.dir === "asc" ? "desc" : "asc") : first;
      const rows = Array.from(body.rows).filter((r) => r.cells.length > 1);
      rows.sort((a, b) => {
        const x = value(a, column, kind), y = value(b, column, kind);
        if (x === null && y === null) return 0;
        if (x === null) return 1;
        if (y === null) return -1;
        const order = x < y ? -1 : x > y ? 1 : 0;
        return dir === "asc" ? order : -order;
      });
      rows.forEach((r) => body.appendChild(r));
      headers.forEach((h, i) => {
        const on = i === column;
        h.classList.toggle("sorted", on);
        const arrow = h.querySelector(".arrow");
        if (arrow) arrow.remove();
        if (on) {
          h.dataset.dir = dir;
          const span = document.createElement("span");
          span.className = "arrow";
          span.textContent = dir === "asc" ? " ↑" : " ↓";
          h.appendChild(span);
          h.setAttribute("aria-sort", dir === "asc" ? "ascending" : "descending");
        } else {
          h.removeAttribute("aria-sort");
        }
        Array.from(body.rows).forEach((r) => { if (r.cells[i]) r.cells[i].classList.toggle("sorted", on); });
      });
    }
  });
})();

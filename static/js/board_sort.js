// A board's view, kept in its URL so that the URL is a shareable permalink: click a header to sort
// by it (again to reverse; empty cells always go last), type in the search box to narrow the rows to
// matching model or team names, and pick the columns shown. The server reads the same parameters
// (sort, dir, q, hide is ours alone) so that an opened link shows the same view; the filter form
// carries them along when it is submitted.
(function () {
  "use strict";
  const form = document.querySelector("form[data-board-view]");

  function field(name) { return form ? form.elements.namedItem(name) : null; }

  // Sets (or, for "", drops) query parameters in the address bar, the filter form and the export links:
  // on a board's own page only (the one with the view's form), not on the home page's cards.
  function remember(params) {
    if (!form) return;
    const url = new URL(window.location.href);
    Object.entries(params).forEach(([name, value]) => {
      if (value) url.searchParams.set(name, value); else url.searchParams.delete(name);
      const input = field(name);
      if (input && input.type === "hidden") { input.value = value; input.disabled = !value; }
    });
    window.history.replaceState(window.history.state, "", url);
    document.querySelectorAll("a[data-board-export]").forEach((link) => {
      const target = new URL(link.href);
      if ("q" in params) {
        if (params.q) target.searchParams.set("q", params.q); else target.searchParams.delete("q");
      }
      link.href = target.toString();
    });
  }

  document.querySelectorAll("table.board[data-board]").forEach((table) => {
    const headers = Array.from(table.tHead.rows[0].cells);
    const body = table.tBodies[0];
    const entries = () => Array.from(body.rows).filter((r) => r.cells.length > 1);

    // --- Sorting -------------------------------------------------------------------------------
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
      // Scores and dates start high-to-low, names and ranks low-to-high (as the server's default).
      const first = ["rank", "ranks", "model", "team", "tokens", "cost"].includes(th.dataset.col) ? "asc" : "desc";
      const dir = th.classList.contains("sorted") ? (th.dataset.dir === "asc" ? "desc" : "asc") : first;
      if (table.hasAttribute("data-paged") && th.dataset.col) {
        // One page of the board holds some of its rows only: the server sorts them all, from the first page.
        const url = new URL(window.location.href);
        url.searchParams.set("sort", th.dataset.col);
        url.searchParams.set("dir", dir);
        url.searchParams.delete("page");
        window.location.assign(url.toString());
        return;
      }
      const rows = entries();
      rows.sort((a, b) => {
        const x = value(a, column, kind), y = value(b, column, kind);
        if (x === null && y === null) return 0;
        if (x === null) return 1;
        if (y === null) return -1;
        const order = x < y ? -1 : x > y ? 1 : 0;
        return dir === "asc" ? order : -order;
      });
      rows.forEach((r) => body.appendChild(r));
      mark(column, dir);
      if (th.dataset.col) remember({ sort: th.dataset.col, dir: dir });
    }

    function mark(column, dir) {
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
        Array.from(body.rows).forEach((r) => { if (r.cells[i] && r.cells.length > 1) r.cells[i].classList.toggle("sorted", on); });
      });
    }

    // The server sorted the rows already; show which column it sorted by.
    const sorted = headers.findIndex((h) => h.classList.contains("sorted"));
    if (sorted >= 0) mark(sorted, headers[sorted].dataset.dir || "desc");

    // --- Search --------------------------------------------------------------------------------
    // Typing narrows the rows shown at once. The server leaves out the rows a search it was asked
    // (q, a permalink) does not match; a search that no longer contains that one fetches the board's
    // rows for the new text in the background and swaps them in: the page is not reloaded, so the
    // box keeps its focus and every key typed meanwhile.
    const search = form ? form.querySelector("[data-board-search]") : null;
    const refreshed = [];
    if (search) {
      const normal = (text) => text.trim().replace(/\s+/g, " ").toLowerCase();
      let served = normal(search.value);
      let asking = null;
      let waiting = null;
      const empty = document.createElement("tr");
      empty.className = "search-empty";
      empty.hidden = true;
      empty.innerHTML = '<td class="empty"></td>';
      empty.cells[0].colSpan = headers.length;
      empty.cells[0].textContent = "No entry matches the search.";
      body.appendChild(empty);

      const narrow = (needle) => {
        let shown = 0;
        entries().forEach((row) => {
          const hit = !needle || (row.dataset.search || "").includes(needle);
          row.hidden = !hit;
          if (hit) shown += 1;
        });
        empty.hidden = shown > 0 || entries().length === 0;
      };

      // The board's rows (and its pagers) for ``needle``, as the server renders its permalink.
      const fetchRows = (needle) => {
        if (asking) asking.abort();
        const controller = new AbortController();
        asking = controller;
        const url = new URL(window.location.href);
        if (needle) url.searchParams.set("q", needle); else url.searchParams.delete("q");
        url.searchParams.delete("page");
        fetch(url.toString(), { credentials: "same-origin", signal: controller.signal, headers: { Accept: "text/html" } })
          .then((response) => (response.ok ? response.text() : Promise.reject(new Error(String(response.status)))))
          .then((html) => {
            if (asking !== controller) return;
            asking = null;
            const page = new DOMParser().parseFromString(html, "text/html");
            const fresh = page.querySelector("table.board[data-board] tbody");
            if (!fresh) return;
            body.replaceChildren(...Array.from(fresh.rows).map((row) => document.importNode(row, true)));
            body.appendChild(empty);
            const slots = Array.from(document.querySelectorAll("[data-board-pager]"));
            const freshSlots = Array.from(page.querySelectorAll("[data-board-pager]"));
            slots.forEach((slot, i) => { if (freshSlots[i]) slot.innerHTML = freshSlots[i].innerHTML; });
            const paged = page.querySelector("table.board[data-board]").hasAttribute("data-paged");
            table.toggleAttribute("data-paged", paged);
            served = needle;
            refreshed.forEach((again) => again());
            apply();
          })
          .catch(() => {
            if (asking === controller) asking = null;
          });
      };

      function apply() {
        const needle = normal(search.value);
        remember({ q: needle });
        if (served && !needle.includes(served)) {
          // Rows the server left out may match: ask it (once typing pauses), and meanwhile show
          // the rows at hand that match.
          narrow(needle);
          window.clearTimeout(waiting);
          waiting = window.setTimeout(() => fetchRows(needle), 150);
          return;
        }
        narrow(needle);
      }
      search.addEventListener("input", apply);
      search.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); apply(); } });
    }
    // Rows swapped in by a search are marked as the rows they replace were.
    refreshed.push(() => {
      const at = headers.findIndex((h) => h.classList.contains("sorted"));
      if (at >= 0) mark(at, headers[at].dataset.dir || "desc");
    });

    // --- Column picker -------------------------------------------------------------------------
    // Any header with a data-col and data-label can be hidden; the hidden ones are the URL's hide.
    const pickable = headers.filter((h) => h.dataset.col && h.dataset.label);
    if (!form || !pickable.length) return;
    const hidden = new Set((new URL(window.location.href).searchParams.get("hide") || "").split(",").filter(Boolean));
    const picker = document.createElement("details");
    picker.className = "column-picker";
    const summary = document.createElement("summary");
    summary.textContent = "Columns";
    picker.appendChild(summary);
    const list = document.createElement("div");
    list.className = "column-picker-list";
    picker.appendChild(list);

    function show(th, visible) {
      const index = headers.indexOf(th);
      th.classList.toggle("col-hidden", !visible);
      Array.from(body.rows).forEach((r) => {
        if (r.cells.length > 1 && r.cells[index]) r.cells[index].classList.toggle("col-hidden", !visible);
      });
    }

    refreshed.push(() => pickable.forEach((th) => show(th, !hidden.has(th.dataset.col))));
    pickable.forEach((th) => {
      const label = document.createElement("label");
      const box = document.createElement("input");
      box.type = "checkbox";
      box.name = "column";
      box.value = th.dataset.col;
      box.checked = !hidden.has(th.dataset.col);
      label.appendChild(box);
      label.appendChild(document.createTextNode(" " + th.dataset.label));
      list.appendChild(label);
      show(th, box.checked);
      box.addEventListener("change", () => {
        if (box.checked) hidden.delete(th.dataset.col); else hidden.add(th.dataset.col);
        show(th, box.checked);
        remember({ hide: pickable.map((h) => h.dataset.col).filter((c) => hidden.has(c)).join(",") });
      });
    });
    table.parentNode.insertBefore(picker, table);
    if (hidden.size) remember({ hide: pickable.map((h) => h.dataset.col).filter((c) => hidden.has(c)).join(",") });
  });
})();

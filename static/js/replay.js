// Step-by-step replay viewer: the trajectory JSON is embedded in the page, frames are fetched by name.
(function () {
  "use strict";
  const dataNode = document.getElementById("trajectory-data");
  if (!dataNode) return;
  const t = JSON.parse(dataNode.textContent);
  const root = document.querySelector(".replay");
  const frameBase = root.dataset.frameBase.replace("frame_0000.png", "");
  const items = [{ label: "start", frame: t.initial_frame, step: null }].concat(
    (t.steps || []).map((s) => ({ label: s.index + ". " + s.action, frame: s.frame, step: s }))
  );
  const list = document.getElementById("step-list");
  const img = document.getElementById("frame");
  const caption = document.getElementById("frame-caption");
  const table = document.getElementById("step-table");
  const replyBox = document.getElementById("reply");
  const requestBox = document.getElementById("request");
  let current = 0;

  items.forEach((item, i) => {
    const li = document.createElement("li");
    li.textContent = item.label;
    li.tabIndex = -1;
    li.addEventListener("click", () => show(i));
    list.appendChild(li);
  });

  function row(name, value) {
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    const td = document.createElement("td");
    th.textContent = name;
    td.textContent = value === undefined || value === null ? "—" : String(value);
    tr.append(th, td);
    return tr;
  }

  function fmt(x) { return typeof x === "number" ? (Math.round(x * 1000) / 1000).toString() : x; }

  function describeMessages(messages) {
    return (messages || []).map((m) => {
      const content = Array.isArray(m.content)
        ? m.content.map((p) => (p.type === "text" ? p.text : "[image " + p.frame + "]")).join("\n")
        : m.content;
      return "── " + m.role + " ──\n" + content;
    }).join("\n\n");
  }

  function show(i) {
    current = Math.max(0, Math.min(items.length - 1, i));
    const item = items[current];
    Array.from(list.children).forEach((li, j) => li.classList.toggle("active", j === current));
    list.children[current].scrollIntoView({ block: "nearest" });
    if (item.frame) { img.src = frameBase + item.frame; img.hidden = false; } else { img.hidden = true; }
    caption.textContent = current === 0 ? "Initial observation" : "After step " + current + " of " + (items.length - 1);
    table.replaceChildren();
    const s = item.step;
    if (s) {
      const info = s.info || {};
      table.append(row("Action", s.action), row("Reward", fmt(s.reward)), row("Cumulative", fmt(info.cumulative)),
        row("Best so far", fmt(info.best)), row("Done", s.done), row("Model call", s.call));
      const call = (t.calls || [])[s.call];
      replyBox.textContent = call ? call.reply : "";
      requestBox.textContent = call ? describeMessages(call.messages) : "";
    } else {
      table.append(row("Score", fmt(t.score)), row("Outcome", t.outcome), row("Model calls", (t.calls || []).length),
        row("Steps", (t.steps || []).length));
      const first = (t.calls || [])[0];
      replyBox.textContent = first ? first.reply : "";
      requestBox.textContent = first ? describeMessages(first.messages) : "";
    }
  }

  document.addEventListener("keydown", (e) => {
    if (e.target.closest("input, textarea")) return;
    if (e.key === "ArrowRight") { show(current + 1); e.preventDefault(); }
    else if (e.key === "ArrowLeft") { show(current - 1); e.preventDefault(); }
    else if (e.key === "Home") { show(0); e.preventDefault(); }
    else if (e.key === "End") { show(items.length - 1); e.preventDefault(); }
  });
  show(0);
})();

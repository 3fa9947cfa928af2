// WebUI replay: per state, target and generated screenshots with matched elements outlined.
(function () {
  "use strict";
  const node = document.getElementById("webui-data");
  if (!node) return;
  const data = JSON.parse(node.textContent);
  const root = document.querySelector(".webui-replay");
  const base = root.dataset.frameBase.replace("frame_0000.png", "");
  const host = document.getElementById("webui-states");
  const PAGE_WIDTH = 1920;

  function colour(score) { return "hsl(" + Math.round(120 * Math.max(0, Math.min(1, score))) + ", 75%, 42%)"; }
  function pct(x) { return (100 * x).toFixed(1) + "%"; }

  // Why a state has no screenshot, read from the attempt's evaluation (the section's data attributes).
  const evaluation = { outcome: root.dataset.outcome || "", load_error: root.dataset.loadError || "" };
  function missingReason(side, state) {
    if (side === "target") return "the target page gave no screenshot of this state";
    if (evaluation.outcome === "parse_error") return "the reply held no usable code";
    if (evaluation.load_error) return "the page failed to load (" + evaluation.load_error + ")";
    if (state.action_error) return "its action failed (" + state.action_error + ")";
    return "the generated page did not reach this state";
  }

  // One side of a state: its screenshot (a link to the full-size image) with the element boxes
  // drawn over it, or a placeholder saying why there is none.
  function shot(side, state, boxes) {
    const frame = side === "target" ? state.target_frame : state.generated_frame;
    const figure = document.createElement("figure");
    figure.className = "shot-figure " + side;
    const caption = document.createElement("figcaption");
    caption.textContent = side === "target" ? "Target" : "Generated";
    figure.appendChild(caption);
    const wrap = document.createElement("div");
    wrap.className = "shot";
    figure.appendChild(wrap);
    if (!frame) {
      wrap.textContent = "not rendered: " + missingReason(side, state);
      wrap.classList.add("empty");
      return figure;
    }
    const link = document.createElement("a");
    link.className = "enlarge";
    link.href = base + frame;
    link.target = "_blank";
    link.rel = "noopener";
    link.title = "Open the full-size screenshot";
    const img = document.createElement("img");
    img.src = base + frame;
    img.alt = (side === "target" ? "target" : "generated") + " state " + state.name;
    link.appendChild(img);
    wrap.appendChild(link);
    caption.append(" · ");
    const full = document.createElement("a");
    full.href = base + frame;
    full.target = "_blank";
    full.rel = "noopener";
    full.textContent = "full size";
    caption.appendChild(full);
    img.addEventListener("load", () => {
      const scale = img.clientWidth / PAGE_WIDTH;
      boxes.forEach((b) => {
        const [x, y, w, h] = b.rect;
        if (y * scale > img.clientHeight) return; // below the captured area
        const div = document.createElement("div");
        div.className = "box" + (b.unmatched ? " unmatched" : "");
        div.style.left = x * scale + "px"; div.style.top = y * scale + "px";
        div.style.width = Math.max(1, w * scale) + "px"; div.style.height = Math.max(1, h * scale) + "px";
        if (!b.unmatched) div.style.borderColor = colour(b.score);
        div.title = b.title;
        wrap.appendChild(div);
      });
    });
    return figure;
  }

  function table(matched) {
    const t = document.createElement("table");
    t.className = "board elements";
    t.innerHTML = "<thead><tr><th>Target element</th><th>Generated element</th><th class='num'>Score</th>" +
      "<th class='num'>Weight</th><th class='num'>Position</th><th>Properties</th></tr></thead>";
    const body = document.createElement("tbody");
    matched.forEach((m) => {
      const tr = document.createElement("tr");
      const props = (m.properties || []).map((p) =>
        p.entry + (p.name !== p.entry ? "/" + p.name : "") + " " +
        (p.similarity === null || p.similarity === undefined ? "–" : Number(p.similarity).toFixed(2))).join(" · ");
      [m.target_xpath, m.generated_xpath, pct(m.score), m.weight.toFixed(0), Number(m.position).toFixed(2), props]
        .forEach((v, i) => { const td = document.createElement("td"); td.textContent = v; if (i >= 2 && i <= 4) td.className = "num"; tr.appendChild(td); });
      tr.style.borderLeft = "4px solid " + colour(m.score);
      body.appendChild(tr);
    });
    t.appendChild(body);
    return t;
  }

  (data.states || []).forEach((state) => {
    const section = document.createElement("div");
    section.className = "card webui-state";
    const s = state.score || {};
    const h = document.createElement("h3");
    h.textContent = state.name + " — " + (s.W ? pct(s.score) : "no scored element") +
      (state.action_error ? " — action failed: " + state.action_error : "") +
      (s.excluded && s.excluded.length ? " — " + s.excluded.length + " unchanged element(s) not scored" : "");
    section.appendChild(h);
    const matched = s.matched || [];
    const targetBoxes = matched.map((m) => ({ rect: m.target_rect, score: m.score, title: m.target_xpath + " " + pct(m.score) }))
      .concat((s.unmatched || []).map((u) => ({ rect: u.rect, unmatched: true, title: u.xpath + " (unmatched)" })));
    const generatedBoxes = matched.map((m) => ({ rect: m.generated_rect, score: m.score, title: m.generated_xpath + " " + pct(m.score) }));
    const pair = document.createElement("div");
    pair.className = "pair";
    pair.append(shot("target", state, targetBoxes), shot("generated", state, generatedBoxes));
    section.appendChild(pair);
    if (matched.length) {
      const details = document.createElement("details");
      const summary = document.createElement("summary");
      summary.textContent = matched.length + " matched element(s), " + (s.unmatched || []).length + " unmatched";
      details.append(summary, table(matched));
      section.appendChild(details);
    }
    host.appendChild(section);
  });
})();

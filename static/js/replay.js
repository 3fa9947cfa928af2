// Step-by-step replay viewer: the trajectory's first page is embedded in the page, the others are
// fetched from the trajectory API, frames by name.
(function () {
  "use strict";
  const dataNode = document.getElementById("trajectory-data");
  if (!dataNode) return;
  const t = JSON.parse(dataNode.textContent);
  const root = document.querySelector(".replay");
  const frameBase = root.dataset.frameBase.replace("frame_0000.png", "");
  const calls = t.calls || [];
  const steps = t.steps || [];
  const totals = (t.page || {}).totals || {};
  // One timeline of model calls and environment steps: a reply that could not be parsed gets an
  // entry of its own (it moved nothing, so the previous frame stays), then the steps it produced.
  // Rebuilt whenever another page of a long trajectory arrives.
  let items = [];
  function timeline() {
    const built = [{ label: "start", frame: t.initial_frame, step: null, call: null }];
    const byCall = new Map();
    steps.forEach((s) => { if (!byCall.has(s.call)) byCall.set(s.call, []); byCall.get(s.call).push(s); });
    let lastFrame = t.initial_frame;
    function pushSteps(list) {
      list.forEach((s) => {
        if (s.frame) lastFrame = s.frame;
        built.push({ label: s.index + ". " + s.action, frame: s.frame, step: s, call: calls[s.call] || null });
      });
    }
    calls.forEach((c, i) => {
      if (c.parse_error) {
        const where = c.decision ? "decision " + c.decision : "reply";
        built.push({ label: "✗ " + where + (c.retry ? " (retry " + c.retry + ")" : "") + ": not parsed",
          frame: lastFrame, step: null, call: c, failed: true });
      }
      pushSteps(byCall.get(i) || []);
      byCall.delete(i);
    });
    byCall.forEach(pushSteps);  // steps whose call was not recorded still belong on the timeline
    return built;
  }
  const stepCount = typeof totals.steps === "number" ? totals.steps : steps.length;
  const list = document.getElementById("step-list");
  const img = document.getElementById("frame");
  const caption = document.getElementById("frame-caption");
  const table = document.getElementById("step-table");
  const replyBox = document.getElementById("reply");
  const requestBox = document.getElementById("request");
  let current = 0;

  function fillList() {
    items = timeline();
    list.replaceChildren();
    items.forEach((item, i) => {
      const li = document.createElement("li");
      li.textContent = item.label;
      if (item.failed) li.classList.add("failed");
      li.tabIndex = -1;
      li.addEventListener("click", () => show(i));
      if (i === current) li.classList.add("active");
      list.appendChild(li);
    });
  }
  fillList();

  // Scrolls the list, not the page, to bring an entry into view.
  function scrollWithin(container, entry) {
    if (!entry) return;
    const top = entry.offsetTop - container.offsetTop;
    if (top < container.scrollTop) container.scrollTop = top;
    else if (top + entry.offsetHeight > container.scrollTop + container.clientHeight) {
      container.scrollTop = top + entry.offsetHeight - container.clientHeight;
    }
  }

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

  // Shows timeline entry i. Unless it came from the environment's panel (quiet), the panel is told
  // which decision that is ("replay:select"), so its panel, its list and its chart follow.
  function show(i, quiet) {
    current = Math.max(0, Math.min(items.length - 1, i));
    const item = items[current];
    Array.from(list.children).forEach((li, j) => li.classList.toggle("active", j === current));
    scrollWithin(list, list.children[current]);
    if (!quiet) {
      const decision = item.step ? item.step.index : current === 0 ? 0 : null;
      if (decision !== null) document.dispatchEvent(new CustomEvent("replay:select", { detail: { decision: decision } }));
    }
    // Near the end of the steps that have arrived: fetch the next page before the visitor gets there.
    if (items.length - current <= 5) loadNext().catch(showLoadError);
    if (item.frame) { img.src = frameBase + item.frame; img.hidden = false; } else { img.hidden = true; }
    const s = item.step;
    caption.textContent = current === 0 ? "Initial observation"
      : s ? "After step " + s.index + " of " + stepCount
      : "Unchanged: this reply could not be parsed";
    table.replaceChildren();
    if (s) {
      const info = s.info || {};
      const call = item.call || {};
      table.append(row("Action", s.action), row("Parsed from the reply", (call.parsed || []).join(", ")),
        row("Reward", fmt(s.reward)), row("Score so far", fmt(s.score_so_far)), row("Cumulative", fmt(info.cumulative)),
        row("Best so far", fmt(info.best)), row("Done", s.done), row("Model call", s.call));
      if (parseErrorsBefore(s.call)) table.append(row("Unparsed replies before it", parseErrorsBefore(s.call)));
    } else if (item.failed) {
      const c = item.call;
      table.append(row("Parse error", c.parse_error), row("Decision", c.decision), row("Retry", c.retry),
        row("Model call", c.index));
    } else {
      table.append(row("Score", fmt(t.score)), row("Outcome", t.outcome), row("Model calls", calls.length),
        row("Steps", stepCount), row("Unparsed replies", calls.filter((c) => c.parse_error).length));
    }
    const call = item.call || (current === 0 ? calls[0] : null);
    if (call && call.finish_reason && call.finish_reason !== "stop") table.append(row("Finish reason", call.finish_reason));
    if (call && call.refusal) table.append(row("Refusal", call.refusal));
    replyBox.textContent = call ? call.reply : "";
    requestBox.textContent = call ? describeMessages(call.messages) : "";
  }

  // How many replies for the same decision failed to parse before the one that produced this step.
  function parseErrorsBefore(callIndex) {
    const c = calls[callIndex];
    if (!c || !c.retry) return 0;
    return calls.slice(0, callIndex).filter((o) => o.decision === c.decision && o.parse_error).length;
  }

  document.addEventListener("keydown", (e) => {
    if (e.target.closest("input, textarea")) return;
    if (e.key === "ArrowRight") { show(current + 1); e.preventDefault(); }
    else if (e.key === "ArrowLeft") { show(current - 1); e.preventDefault(); }
    else if (e.key === "Home") { show(0); e.preventDefault(); }
    else if (e.key === "End") {
      e.preventDefault();
      loadAll().then(() => show(items.length - 1), showLoadError);
    }
  });

  // The environment's panel moved to another decision (a click on its list or chart, playback):
  // the timeline marks it too, fetching the pages up to it when needed.
  document.addEventListener("replay:decision", (event) => {
    const detail = event.detail || {};
    const decision = detail.decision || 0;
    const find = () => (decision === 0 ? 0 : items.findIndex((item) => item.step && item.step.index === decision));
    const select = () => {
      const at = find();
      if (at < 0) return false;
      if (detail.scroll === false) {
        current = at;
        Array.from(list.children).forEach((li, j) => li.classList.toggle("active", j === current));
      } else {
        show(at, true);
      }
      return true;
    };
    if (!select()) loadUntil(() => find() >= 0).then(select, showLoadError);
  });

  // A long trajectory arrives a page at a time: its steps and calls join the timeline, its calls the table.
  const callRows = document.getElementById("call-rows");
  // The same words as the page's first rows (templates/submissions/replay.html).
  function endpointSaid(c) {
    let text = c.finish_reason || "";
    if (c.refusal) text += " · refused: " + c.refusal;
    if (c.reasoning_chars) text += " · reasoning " + c.reasoning_chars + " chars";
    if (c.reasoning_tokens) text += " · " + c.reasoning_tokens + " reasoning tokens";
    if (c.platform_wait) text += " · retried, " + c.platform_wait + " s lost";
    return text;
  }
  function callRow(c) {
    const tr = document.createElement("tr");
    const usage = c.usage || {};
    // The template's order: latency and tokens before the parsed actions.
    [c.index, c.decision || "–", c.retry, c.latency,
      (usage.prompt === undefined ? "?" : usage.prompt) + "/" + (usage.completion === undefined ? "?" : usage.completion),
      (c.parsed || []).join(", ").slice(0, 120), c.parse_error || "", endpointSaid(c),
    ].forEach((value, i) => {
      const td = document.createElement("td");
      if (i === 3 || i === 4) td.className = "num";
      if (i === 5) td.className = "parsed";
      td.textContent = value === undefined || value === null ? "" : String(value);
      tr.appendChild(td);
    });
    return tr;
  }
  // Only the first page is embedded; the next one is fetched when the visitor nears the end of what
  // has arrived (moving along the timeline, scrolling its list, asking for the end), not up front.
  const pageSize = (t.page || {}).limit || 50;
  let offset = pageSize;
  let loading = null;
  function more() { return (totals.steps || 0) > steps.length || (totals.calls || 0) > calls.length; }
  function loadNext() {
    if (loading) return loading;
    if (!t.page || !root.dataset.pages || !more()) return Promise.resolve(false);
    loading = (async () => {
      const response = await fetch(root.dataset.pages + "?offset=" + offset + "&limit=" + pageSize,
        { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error("trajectory page " + offset + ": HTTP " + response.status);
      const page = (await response.json()).trajectory || {};
      const moreSteps = page.steps || [];
      const moreCalls = page.calls || [];
      offset += pageSize;
      steps.push(...moreSteps);
      calls.push(...moreCalls);
      if (callRows) moreCalls.forEach((c) => callRows.appendChild(callRow(c)));
      const scrolled = list.scrollTop;
      fillList();
      list.scrollTop = scrolled;
      if (!moreSteps.length && !moreCalls.length) { totals.steps = steps.length; totals.calls = calls.length; }
      noteProgress();
      return moreSteps.length + moreCalls.length > 0;
    })().finally(() => { loading = null; });
    return loading;
  }
  async function loadUntil(done) {
    while (!done() && more()) {
      if (!(await loadNext())) break;
    }
  }
  function loadAll() { return loadUntil(() => false); }
  function noteProgress() {
    const note = document.getElementById("replay-loading");
    if (!note) return;
    note.hidden = !more();
    note.textContent = "Showing the first " + steps.length + " of " + stepCount + " steps; the next ones load as you " +
      "move towards them (End loads them all).";
  }
  function showLoadError(error) {
    const note = document.getElementById("replay-loading");
    if (note) { note.hidden = false; note.textContent = "The rest of this replay could not be loaded: " + error.message; }
  }
  list.addEventListener("scroll", () => {
    if (list.scrollTop + list.clientHeight >= list.scrollHeight - 40) loadNext().catch(showLoadError);
  });
  show(0, true);
  noteProgress();
})();

// Football replay: the engine log drawn on a 2D pitch step by step, with the reward terms plotted below.
(function () {
  "use strict";
  const node = document.getElementById("football-data");
  if (!node) return;
  const data = JSON.parse(node.textContent);
  const trajectoryNode = document.getElementById("trajectory-data");
  const trajectory = trajectoryNode ? JSON.parse(trajectoryNode.textContent) : {};
  const root = document.querySelector(".football-replay");
  const frameBase = root.dataset.frameBase.replace("frame_0000.png", "");

  const steps = Array.isArray(data.steps) ? data.steps : [];
  const segments = Array.isArray(data.segments) ? data.segments : [];
  // A long attack arrives a page of engine steps at a time (see fetchRest): total is all of them.
  const totals = (data.page || {}).totals || {};
  let total = typeof totals.steps === "number" ? totals.steps : steps.length;
  const termNames = Array.isArray(data.term_names) && data.term_names.length
    ? data.term_names : Object.keys((steps[0] || {}).terms || {});
  const decisions = Array.isArray(trajectory.steps) ? trajectory.steps : [];
  // Every engine step's reward terms come with the first page (without the observations that make the
  // log long), so the reward chart shows the whole episode from the start.
  const rewards = Array.isArray(data.rewards) ? data.rewards : null;
  const rewardSteps = () => rewards || steps;

  const canvas = document.getElementById("football-pitch");
  const ctx = canvas.getContext("2d");
  const playButton = document.getElementById("football-play");
  const speedSelect = document.getElementById("football-speed");
  const slider = document.getElementById("football-slider");
  const segmentList = document.getElementById("football-segments");
  const frameImg = document.getElementById("football-frame");
  const frameCaption = document.getElementById("football-frame-caption");
  const chart = document.getElementById("football-chart");
  const text = (id, value) => { document.getElementById(id).textContent = value; };

  // The engine's pitch is x ∈ [-1, 1] by y ∈ [-0.42, 0.42]; drawn in metres it keeps a real pitch's shape.
  const HALF_LENGTH = 52.5;
  const HALF_WIDTH = 34;
  const X_METRES = HALF_LENGTH;
  const Y_METRES = HALF_WIDTH / 0.42;
  const GOAL_HALF = 0.044 * Y_METRES;
  const MARGIN = 5;
  const ASPECT = (HALF_WIDTH + MARGIN) / (HALF_LENGTH + MARGIN);
  const ENGINE_STEPS_PER_SECOND = 10; // the engine advances 100 ms of match time per step
  const COLOURS = {
    grass: "#3f8f46", stripe: "#47994e", line: "rgba(255,255,255,.85)", ours: "#2457c5", oursKeeper: "#102f73",
    theirs: "#c0392b", theirsKeeper: "#6e1a12", owner: "#ffd400", active: "#ffffff",
  };
  const TERM_COLOURS = {
    move: "#4d7cc9", opponents: "#1f7a46", score: "#d9a21b", stolen: "#8c2d2d", pass: "#7c5cc4", shot: "#c0582b",
  };
  const GAME_MODES = ["normal play", "kick-off", "goal kick", "free kick", "corner", "throw-in", "penalty"];

  let position = 0; // fractional while playing: 0 is the initial observation, t the state after engine step t
  let shownStep = -1;
  let playing = false;
  let lastTick = 0;
  let speed = Number(speedSelect.value) || 1;
  let scale = 1;

  function observation(t) { return t <= 0 ? data.initial : (steps[t - 1] || {}).observation; }
  function fmt(x, digits) {
    return typeof x === "number" && isFinite(x) ? x.toFixed(digits === undefined ? 3 : digits) : "—";
  }
  function signed(x) { return typeof x === "number" && isFinite(x) ? (x >= 0 ? "+" : "") + x.toFixed(3) : "—"; }

  // --- pitch ------------------------------------------------------------------------------------
  function resize() {
    const dpr = window.devicePixelRatio || 1;
    const width = Math.max(320, canvas.clientWidth || canvas.width);
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(width * ASPECT * dpr);
    scale = canvas.width / (2 * (HALF_LENGTH + MARGIN));
  }
  const px = (metres) => metres * scale;
  const sx = (x) => (x * X_METRES + HALF_LENGTH + MARGIN) * scale;
  const sy = (y) => (y * Y_METRES + HALF_WIDTH + MARGIN) * scale;
  const mx = (metres) => (metres + HALF_LENGTH + MARGIN) * scale;
  const my = (metres) => (metres + HALF_WIDTH + MARGIN) * scale;

  function drawPitch() {
    ctx.fillStyle = COLOURS.grass;
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    const stripe = (2 * HALF_LENGTH) / 12;
    ctx.fillStyle = COLOURS.stripe;
    for (let i = 0; i < 12; i += 2) ctx.fillRect(mx(-HALF_LENGTH + i * stripe), my(-HALF_WIDTH), px(stripe), px(2 * HALF_WIDTH));
    ctx.strokeStyle = COLOURS.line;
    ctx.lineWidth = Math.max(1, px(0.25));
    ctx.strokeRect(mx(-HALF_LENGTH), my(-HALF_WIDTH), px(2 * HALF_LENGTH), px(2 * HALF_WIDTH));
    line(0, -HALF_WIDTH, 0, HALF_WIDTH);
    circle(0, 0, 9.15, false);
    circle(0, 0, 0.4, true);
    [-1, 1].forEach((side) => {
      const goalLine = side * HALF_LENGTH;
      box(goalLine, 16.5, 20.16, side);
      box(goalLine, 5.5, 9.16, side);
      const spot = goalLine - side * 11;
      circle(spot, 0, 0.4, true);
      // Only the arc outside the penalty box is marked.
      const open = Math.acos(5.5 / 9.15);
      const facing = side > 0 ? Math.PI : 0;
      ctx.beginPath();
      ctx.arc(mx(spot), my(0), px(9.15), facing - open, facing + open);
      ctx.stroke();
      ctx.save();
      ctx.fillStyle = "rgba(255,255,255,.35)";
      const depth = 2.2;
      const x0 = side > 0 ? goalLine : goalLine - depth;
      ctx.fillRect(mx(x0), my(-GOAL_HALF), px(depth), px(2 * GOAL_HALF));
      ctx.strokeRect(mx(x0), my(-GOAL_HALF), px(depth), px(2 * GOAL_HALF));
      ctx.restore();
    });
  }
  function line(x0, y0, x1, y1) {
    ctx.beginPath(); ctx.moveTo(mx(x0), my(y0)); ctx.lineTo(mx(x1), my(y1)); ctx.stroke();
  }
  function circle(x, y, r, fill) {
    ctx.beginPath(); ctx.arc(mx(x), my(y), px(r), 0, 2 * Math.PI);
    if (fill) { ctx.fillStyle = COLOURS.line; ctx.fill(); } else { ctx.stroke(); }
  }
  function box(goalLine, depth, halfWidth, side) {
    const x0 = side > 0 ? goalLine - depth : goalLine;
    ctx.strokeRect(mx(x0), my(-halfWidth), px(depth), px(2 * halfWidth));
  }

  function lerpPoint(a, b, f) {
    if (!b || f === 0) return a;
    return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f, (a[2] || 0) + ((b[2] || 0) - (a[2] || 0)) * f];
  }
  function lerpTeam(a, b, f) {
    return (a || []).map((p, i) => lerpPoint(p, b && b.length === a.length ? b[i] : null, f));
  }

  function drawTeam(players, directions, fill, keeperFill, radius) {
    players.forEach((p, i) => {
      const x = sx(p[0]);
      const y = sy(p[1]);
      const d = (directions || [])[i];
      if (d) {
        // A direction is a per-step displacement: drawn one second ahead it reads as a run.
        ctx.strokeStyle = "rgba(255,255,255,.55)";
        ctx.lineWidth = Math.max(1, px(0.2));
        ctx.beginPath(); ctx.moveTo(x, y);
        ctx.lineTo(sx(p[0] + d[0] * ENGINE_STEPS_PER_SECOND), sy(p[1] + d[1] * ENGINE_STEPS_PER_SECOND));
        ctx.stroke();
      }
      ctx.beginPath(); ctx.arc(x, y, radius, 0, 2 * Math.PI);
      ctx.fillStyle = i === 0 ? keeperFill : fill;
      ctx.fill();
      ctx.strokeStyle = "#fff"; ctx.lineWidth = Math.max(1, radius / 6); ctx.stroke();
      if (radius >= 7) {
        ctx.fillStyle = "#fff";
        ctx.font = "600 " + Math.round(radius * 1.05) + "px system-ui, sans-serif";
        ctx.textAlign = "center"; ctx.textBaseline = "middle";
        ctx.fillText(String(i), x, y + 0.5);
      }
    });
  }

  function draw() {
    drawPitch();
    const t = Math.floor(position);
    const f = position - t;
    const a = observation(t);
    if (!a || !Array.isArray(a.left_team) || !Array.isArray(a.right_team)) return;
    const b = f > 0 ? observation(t + 1) : null;
    const discrete = f < 0.5 || !b ? a : b; // possession and control change on a step, never halfway
    const ours = lerpTeam(a.left_team, b && b.left_team, f);
    const theirs = lerpTeam(a.right_team, b && b.right_team, f);
    const radius = Math.max(5, px(1.3));
    drawTeam(theirs, a.right_team_direction, COLOURS.theirs, COLOURS.theirsKeeper, radius);
    drawTeam(ours, a.left_team_direction, COLOURS.ours, COLOURS.oursKeeper, radius);

    const ownerTeam = discrete.ball_owned_team === 0 ? ours : discrete.ball_owned_team === 1 ? theirs : null;
    const owner = ownerTeam ? ownerTeam[discrete.ball_owned_player] : null;
    if (owner) {
      ctx.beginPath(); ctx.arc(sx(owner[0]), sy(owner[1]), radius + Math.max(3, px(0.8)), 0, 2 * Math.PI);
      ctx.strokeStyle = COLOURS.owner; ctx.lineWidth = Math.max(2, px(0.45)); ctx.stroke();
    }
    const active = ours[discrete.active];
    if (active) {
      const x = sx(active[0]);
      const y = sy(active[1]) - radius - Math.max(4, px(1));
      const size = Math.max(5, px(1.3));
      ctx.beginPath(); ctx.moveTo(x, y); ctx.lineTo(x - size, y - size * 1.4); ctx.lineTo(x + size, y - size * 1.4);
      ctx.closePath();
      ctx.fillStyle = COLOURS.active; ctx.fill();
      ctx.strokeStyle = "#1d2330"; ctx.lineWidth = 1; ctx.stroke();
    }

    if (Array.isArray(a.ball)) {
      const ball = lerpPoint(a.ball, b && b.ball, f);
      const height = Math.max(0, Math.min(12, ball[2] || 0));
      const x = sx(ball[0]);
      const ground = sy(ball[1]);
      // The shadow stays on the ground and the ball is lifted and enlarged with its height.
      ctx.beginPath();
      ctx.ellipse(x, ground, Math.max(3, px(0.8)), Math.max(2, px(0.5)), 0, 0, 2 * Math.PI);
      ctx.fillStyle = "rgba(0,0,0,.35)"; ctx.fill();
      ctx.beginPath();
      ctx.arc(x, ground - px(height * 0.6), Math.max(3.5, px(0.7 + 0.18 * height)), 0, 2 * Math.PI);
      ctx.fillStyle = "#fff"; ctx.fill();
      ctx.strokeStyle = "#1d2330"; ctx.lineWidth = Math.max(1, px(0.15)); ctx.stroke();
    }
  }

  // --- caption, frame and decisions -------------------------------------------------------------
  // The pitch, the frame, the decision list, the chart's marker and the shared timeline above
  // (static/js/replay.js) are one navigator: whichever the visitor moves, the others follow. The
  // timeline announces its choice as "replay:select"; this panel answers with "replay:decision".
  function decisionAt(t) { return t <= 0 ? null : (steps[t - 1] || {}).decision; }

  function decisionRecord(k) {
    return decisions.find((d) => d.index === k) || decisions[k - 1] || null;
  }

  function showFrame(k) {
    let name = null;
    let label;
    if (k === null || k === undefined) {
      name = trajectory.initial_frame || null;
      label = "Initial frame: the model's view for decision 1";
    } else {
      const record = decisionRecord(k);
      name = record ? record.frame : null;
      label = "Frame after decision " + k + ": the model's view for its next decision";
    }
    if (name) {
      const src = frameBase + name;
      if (frameImg.getAttribute("src") !== src) frameImg.src = src;
      frameImg.hidden = false;
      frameCaption.textContent = label;
    } else {
      frameImg.hidden = true;
      frameImg.removeAttribute("src");
      frameCaption.textContent = k && !decisionRecord(k)
        ? "The frame of decision " + k + " is on a later page of the replay."
        : "No frame was rendered here: the endpoint reads no images.";
    }
  }

  function possession(obs) {
    if (!obs) return "";
    const parts = [];
    if (obs.ball_owned_team === 0) {
      parts.push("Possession: ours, player " + obs.ball_owned_player +
        (obs.ball_owned_player === obs.active ? " (controlled)" : ""));
    } else if (obs.ball_owned_team === 1) {
      parts.push("Possession: opponents, player " + obs.ball_owned_player);
    } else {
      parts.push("Possession: loose ball");
    }
    parts.push("controlling player " + obs.active);
    if (obs.game_mode) parts.push("play stopped: " + (GAME_MODES[obs.game_mode] || "game mode " + obs.game_mode));
    if (Array.isArray(obs.ball)) parts.push("ball height " + fmt(obs.ball[2], 2));
    return parts.join(" · ");
  }

  let shownDecision;
  function highlightDecision(k) {
    Array.from(segmentList.children).forEach((li) => {
      const active = Number(li.dataset.decision) === k;
      li.classList.toggle("active", active);
      // Scrolled within the list only: the page stays where the visitor reads.
      if (active && !playing) scrollWithin(segmentList, li);
    });
  }

  function updateUi(t) {
    shownStep = t;
    const s = t > 0 ? steps[t - 1] : null;
    const obs = observation(t);
    const k = decisionAt(t);
    slider.value = String(t);
    text("football-step", "Step " + t + " / " + total);
    text("football-decision", k ? "decision " + k + " / " + segments.length : "before decision 1");
    text("football-action", s ? s.action : "—");
    document.getElementById("football-auto").hidden = !(s && s.auto);
    text("football-mode", s ? s.mode : "—");
    const score = obs && Array.isArray(obs.score) ? obs.score : [0, 0];
    text("football-score", score[0] + "–" + score[1]);
    text("football-reward", s ? signed(s.reward) : "—");
    text("football-cumulative", fmt(s ? s.cumulative : 0));
    const extras = [];
    if (s && s.pass_clearance !== null && s.pass_clearance !== undefined) extras.push("pass clearance " + fmt(s.pass_clearance));
    if (s && s.shot_clearance !== null && s.shot_clearance !== undefined) extras.push("shot clearance " + fmt(s.shot_clearance));
    text("football-possession", [possession(obs)].concat(extras).join(" · "));
    highlightDecision(k);
    showFrame(k);
    moveMarker(t);
    if (k !== shownDecision) {
      shownDecision = k;
      document.dispatchEvent(new CustomEvent("replay:decision", { detail: { decision: k || 0, scroll: !playing } }));
    }
  }

  function render() {
    draw();
    const t = Math.floor(position);
    if (t !== shownStep) updateUi(t);
  }

  // Shows engine step t, fetching the pages up to it first when they have not arrived yet.
  let wanted = null;
  function go(t) {
    const target = Math.max(0, Math.min(total, Math.round(t)));
    if (target > steps.length) {
      wanted = target;
      ensureSteps(target).then(() => { if (wanted === target) { wanted = null; go(target); } }, showLoadError);
      return;
    }
    wanted = null;
    position = target;
    render();
  }

  function fillSegments() {
    const fragment = document.createDocumentFragment();
    segments.forEach((seg) => {
      const li = document.createElement("li");
      li.dataset.decision = String(seg.decision);
      let autoSteps = 0;
      for (let t = seg.first_step; t <= seg.last_step; t++) if ((steps[t - 1] || {}).auto) autoSteps++;
      const title = document.createElement("span");
      title.className = "segment-action";
      title.textContent = seg.decision + ". " + seg.action;
      const detail = document.createElement("small");
      const span = seg.first_step === seg.last_step ? "step " + seg.first_step : "steps " + seg.first_step + "–" + seg.last_step;
      detail.textContent = span + " · " + seg.mode;
      li.append(title, " ", detail);
      if (seg.last_step > steps.length) li.classList.add("pending");  // its engine steps are on a later page
      if (autoSteps) {
        li.classList.add("auto");
        const badge = document.createElement("span");
        badge.className = "badge auto";
        badge.textContent = "auto ×" + autoSteps;
        badge.title = autoSteps + " engine step(s) carried on automatically";
        li.append(" ", badge);
      }
      li.title = "Jump to engine step " + seg.first_step;
      li.addEventListener("click", () => { pause(); go(seg.first_step); });
      fragment.appendChild(li);
    });
    segmentList.replaceChildren(fragment);
    Array.from(segmentList.children).forEach((li) => {
      li.classList.toggle("active", Number(li.dataset.decision) === decisionAt(shownStep));
    });
  }

  function scrollWithin(container, item) {
    const top = item.offsetTop - container.offsetTop;
    if (top < container.scrollTop) container.scrollTop = top;
    else if (top + item.offsetHeight > container.scrollTop + container.clientHeight) {
      container.scrollTop = top + item.offsetHeight - container.clientHeight;
    }
  }

  // The timeline above moved: show the first engine step of its decision (the start for none).
  document.addEventListener("replay:select", (event) => {
    const k = (event.detail || {}).decision;
    pause();
    if (!k) { go(0); return; }
    const seg = segments.find((s) => s.decision === k);
    if (seg) go(seg.first_step);
  });

  // --- playback --------------------------------------------------------------------------------
  function tick(now) {
    if (!playing) return;
    // Past the steps fetched so far, playing waits for the next page (asked for half a page ahead).
    if (steps.length < total && steps.length - position < pageSize / 2) loadNext().catch(showLoadError);
    position = Math.min(steps.length, position + ((now - lastTick) / 1000) * ENGINE_STEPS_PER_SECOND * speed);
    lastTick = now;
    render();
    if (position >= total) { pause(); return; }
    requestAnimationFrame(tick);
  }
  function play() {
    if (!total) return;
    if (position >= total) position = 0;
    playing = true;
    playButton.textContent = "Pause";
    playButton.setAttribute("aria-label", "Pause");
    lastTick = performance.now();
    requestAnimationFrame(tick);
  }
  function pause() {
    const wasPlaying = playing;
    playing = false;
    playButton.textContent = "Play";
    playButton.setAttribute("aria-label", "Play");
    if (wasPlaying) {
      position = Math.floor(position);
      shownStep = -1;  // shown again: the list and the timeline follow now that playing stopped
      render();
    }
  }
  function toggle() { if (playing) pause(); else play(); }

  playButton.addEventListener("click", toggle);
  speedSelect.addEventListener("change", () => { speed = Number(speedSelect.value) || 1; });
  slider.addEventListener("input", () => { pause(); go(Number(slider.value)); });
  document.addEventListener("keydown", (e) => {
    if (e.target.closest("textarea, select, input:not([type=range])") || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === " ") {
      if (e.target.closest("button, a, summary")) return; // their own activation already handles space
      toggle(); e.preventDefault();
    } else if (e.key === ",") { pause(); go(position - 1); e.preventDefault(); }
    else if (e.key === ".") { pause(); go(position + 1); e.preventDefault(); }
  });
  window.addEventListener("resize", () => { resize(); draw(); });

  // --- reward chart ----------------------------------------------------------------------------
  let markerShape = -1;

  function autoRuns() {
    const runs = [];
    rewardSteps().forEach((s, i) => {
      const t = i + 1;
      if (!s.auto) return;
      const last = runs[runs.length - 1];
      if (last && last[1] === t - 1) last[1] = t; else runs.push([t, t]);
    });
    return runs;
  }

  function chartFigure() {
    const series = rewardSteps();
    const x = series.map((s, i) => (typeof s.t === "number" ? s.t : i + 1));
    const theme = window.MageTheme || { colours: () => ({ text: "#1d2330", muted: "#5f6b7a" }), plotly: (l) => l };
    const termValues = termNames.map((name) => series.map((s) => Number((s.terms || {})[name]) || 0));
    const cumulative = series.map((s) => Number(s.cumulative) || 0);
    const traces = termNames.map((name, i) => ({
      type: "bar", name: name, x: x, y: termValues[i],
      marker: { color: TERM_COLOURS[name] || "#7c8ba1" },
      hovertemplate: name + " %{y:.4f}<extra>step %{x}</extra>",
    }));
    traces.push({
      type: "scatter", mode: "lines+markers", name: "cumulative reward", x: x, y: cumulative,
      yaxis: "y2", line: { color: theme.colours().text, width: 2 }, marker: { size: 4 },
      hovertemplate: "cumulative %{y:.4f}<extra>step %{x}</extra>",
    });
    // The bars stack (positive terms up, negative down), so the left axis must hold each step's sums.
    const stacked = [];
    series.forEach((s, t) => {
      let up = 0;
      let down = 0;
      termValues.forEach((values) => { if (values[t] > 0) up += values[t]; else down += values[t]; });
      stacked.push(up, down);
    });
    const axes = window.MageChartAxes.alignedZeroRanges(stacked, cumulative, 5);
    const runs = autoRuns();
    const shapes = runs.map(([a, b]) => ({
      type: "rect", xref: "x", yref: "paper", x0: a - 0.5, x1: b + 0.5, y0: 0, y1: 1,
      fillcolor: "rgba(95,107,122,.14)", line: { width: 0 }, layer: "below",
    }));
    const annotations = runs.map(([a, b]) => ({
      xref: "x", yref: "paper", x: (a + b) / 2, y: 1, yanchor: "top", showarrow: false,
      text: "auto", font: { size: 11, color: theme.colours().muted },
    }));
    markerShape = shapes.length;
    const at = shownStep < 0 ? 0 : shownStep;
    shapes.push({ type: "line", xref: "x", yref: "paper", x0: at, x1: at, y0: 0, y1: 1,
                  line: { color: "#2457c5", width: 2 } });
    // The title sits in the top margin (two lines on a narrow screen, where one would be cut) and the
    // legend at the bottom of the figure, below the x axis title, with room for as many rows as its
    // entries take at this width: neither is clipped nor drawn over the plot or an axis title.
    const width = chart.clientWidth || 800;
    const narrow = width < 640;
    const entries = termNames.length + 1;
    const legendRows = Math.ceil(entries / Math.max(1, Math.floor((width - 16) / (narrow ? 105 : 130))));
    const bottom = 62 + 22 * legendRows;
    const layout = theme.plotly({
      barmode: "relative", height: 280 + bottom + (narrow ? 20 : 0),
      title: narrow
        // Two lines above the plot, the margin grown to hold them (automargin).
        ? { text: "Reward per engine step (bars, left)<br>and cumulative reward (line, right)", x: 0.03,
            xanchor: "left", xref: "container", y: 1, yref: "paper", yanchor: "bottom", automargin: true,
            pad: { b: 12 }, font: { size: 12 } }
        : { text: "Reward per engine step (bars, left) and cumulative reward (line, right)", x: 0, xanchor: "left",
            xref: "paper", y: 1, yref: "container", yanchor: "top", pad: { t: 8 }, font: { size: 13 } },
      margin: narrow ? { l: 44, r: 50, t: 24, b: bottom } : { l: 64, r: 72, t: 48, b: bottom },
      font: { family: "system-ui, sans-serif", size: 12 },
      xaxis: { title: { text: "engine step", standoff: 8 }, range: [-0.5, total + 0.5], zeroline: false,
               automargin: true },
      yaxis: { title: { text: "reward per step" }, range: axes.left.range, dtick: axes.left.dtick, tick0: 0,
               zeroline: true, zerolinecolor: theme.colours().muted, automargin: true },
      yaxis2: { title: { text: "cumulative reward" }, overlaying: "y", side: "right", range: axes.right.range,
                dtick: axes.right.dtick, tick0: 0, showgrid: false, zeroline: false, automargin: true },
      legend: { orientation: "h", x: 0, xanchor: "left", xref: "container", y: 0, yref: "container", yanchor: "bottom",
                font: { size: narrow ? 11 : 12 } },
      shapes: shapes, annotations: annotations, hovermode: "x",
    });
    return { traces: traces, layout: layout };
  }

  let chartDrawn = false;
  function drawChart() {
    if (!chart) return;
    if (typeof window.Plotly === "undefined" || !window.MageChartAxes) {
      chart.textContent = "The chart library could not be loaded.";
      return;
    }
    const figure = chartFigure();
    const config = { displayModeBar: false, responsive: true };
    if (chartDrawn) { window.Plotly.react(chart, figure.traces, figure.layout, config); return; }
    chartDrawn = true;
    // The cumulative line, the zero line and the "auto" labels take the scheme's colours when drawn, which
    // the site-wide relayout on a scheme change does not reach: redraw the whole figure instead.
    if (window.MageTheme && window.MageTheme.onChange) window.MageTheme.onChange(() => drawChart());
    window.Plotly.newPlot(chart, figure.traces, figure.layout, config).then(() => {
      moveMarker(shownStep);
      chart.on("plotly_click", (event) => {
        const point = event && event.points && event.points[0];
        if (point) { pause(); go(Number(point.x)); }
      });
    });
  }

  function moveMarker(t) {
    if (markerShape < 0 || !chart || !chart.layout) return;
    const update = {};
    update["shapes[" + markerShape + "].x0"] = t;
    update["shapes[" + markerShape + "].x1"] = t;
    window.Plotly.relayout(chart, update);
  }

  // --- pages of a long attack --------------------------------------------------------------------
  // Only the first page of engine steps is embedded; the next is fetched when the visitor (or
  // playback) comes near the end of what has arrived, never all of them up front.
  const pageSize = (data.page || {}).limit || 50;
  let loading = null;
  function loadNext() {
    if (loading) return loading;
    if (steps.length >= total || !root.dataset.pages) return Promise.resolve(false);
    loading = (async () => {
      const response = await fetch(root.dataset.pages + "&offset=" + steps.length + "&limit=" + pageSize,
        { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error("engine log page " + steps.length + ": HTTP " + response.status);
      const more = ((await response.json()).artifact || {}).steps || [];
      steps.push(...more);
      if (!more.length) total = steps.length;  // the log is shorter than it said: stop asking
      fillSegments();
      if (!rewards) drawChart();  // with the whole episode's rewards the chart already shows every step
      return more.length > 0;
    })().finally(() => { loading = null; });
    return loading;
  }
  async function ensureSteps(t) {
    while (steps.length < t && steps.length < total) {
      if (!(await loadNext())) break;
    }
  }
  function showLoadError(error) {
    if (chart) chart.textContent = "The rest of this replay could not be loaded: " + error.message;
  }
  segmentList.addEventListener("scroll", () => {
    // Scrolled near the bottom of the decisions: their engine steps come next.
    if (segmentList.scrollTop + segmentList.clientHeight >= segmentList.scrollHeight - 40) loadNext().catch(showLoadError);
  });

  fillSegments();
  resize();
  go(0);
  drawChart();
})();

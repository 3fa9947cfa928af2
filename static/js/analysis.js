// Charts of a board's analysis and comparison pages. The comparison's data is embedded in its page,
// whose chart is at the top and whose plotly.js is loaded with it; the analysis page fetches its
// charts' data, and the plotly.js bundle it names, once one of its charts is on screen.
(function () {
  "use strict";
  let Plotly = window.Plotly;

  const CONFIG = { displayModeBar: false, responsive: true };
  const FONT = { family: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", size: 12 };
  // Backgrounds and text in the page's colour scheme (static/js/theme.js).
  const theme = window.MageTheme ? window.MageTheme.plotly : (options) => options;
  // A lost-score component's colour: the one its environment declares (EnvironmentPlugin.breakdown_parts,
  // sent as lostParts), so that this script names no environment's components.
  // The score kept has the site's own colour, read from a segment styled as the bars' (.seg.aes).
  function lostColour(data, key) {
    const declared = (data.lostParts || []).find((part) => part.key === key);
    if (declared && declared.colour) return declared.colour;
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    const segment = document.createElementNS("http://www.w3.org/2000/svg", "rect");
    segment.setAttribute("class", "seg " + key);
    svg.setAttribute("aria-hidden", "true");
    svg.style.position = "absolute";
    svg.style.width = "0";
    svg.style.height = "0";
    svg.appendChild(segment);
    document.body.appendChild(svg);
    const fill = window.getComputedStyle(segment).fill;
    svg.remove();
    return fill && fill !== "none" && !fill.startsWith("rgb(0, 0, 0)") ? fill : "#999";
  }
  // Low scores red, high scores green, like the per-scenario matrix.
  const SCORE_COLOURS = [[0, "#e8a39b"], [0.5, "#f3e3a0"], [1, "#8fd19e"]];

  const LEGEND = { orientation: "h", x: 0, xanchor: "left", xref: "container", y: 0, yanchor: "bottom",
    yref: "container" };

  function readJson(id) {
    const node = document.getElementById(id);
    if (!node) return null;
    try {
      return JSON.parse(node.textContent);
    } catch (error) {
      return null;
    }
  }

  // The height goes on the container, not the layout: a responsive plot re-reads its container's size on every
  // window resize, and a container without a height would collapse the chart to its CSS minimum.
  function layout(node, extra) {
    const options = theme(Object.assign({
      font: FONT,
      margin: { l: 60, r: 20, t: 20, b: 50 }, height: 340,
    }, extra));
    // The legend sits under everything else, at the foot of the figure: a legend placed relative to
    // the plot area (y: -0.2) lands on the x axis title and tick labels whenever these are tall.
    options.legend = Object.assign({ bgcolor: "rgba(0,0,0,0)" }, LEGEND, extra && extra.legend);
    node.style.height = options.height + "px";
    delete options.height;
    options.autosize = true;
    return options;
  }

  function draw(id, traces, extraLayout) {
    const node = document.getElementById(id);
    if (!node || !traces.length) return;
    Plotly.newPlot(node, traces, layout(node, extraLayout), CONFIG);
  }

  function axisTitle(text) { return { title: { text: text }, automargin: true }; }

  function drawErrors(data) {
    const rows = data.errors || [];
    if (!rows.length) return;
    const labels = rows.map((r) => r.label);
    draw("chart-errors", [
      { type: "bar", name: "IA %", x: labels, y: rows.map((r) => r.ia), marker: { color: "#c0582b" } },
      { type: "bar", name: "RA %", x: labels, y: rows.map((r) => r.ra), marker: { color: "#4d7cc9" } },
    ], { barmode: "group", yaxis: Object.assign(axisTitle("% of scored attempts"), { rangemode: "tozero" }),
      xaxis: { automargin: true } });
  }

  function drawLost(data) {
    const rows = data.lost || [];
    if (!rows.length) return;
    const labels = rows.map((r) => r.label);
    const kept = (data.scoreLabel || "score").replace(/\s*%$/, "");
    const traces = [{
      // The score kept, named as the board names its score ("AES %" is shown as "AES").
      type: "bar", orientation: "h", name: kept, y: labels, x: rows.map((r) => r.aes),
      marker: { color: lostColour(data, "aes") }, hovertemplate: kept + " %{x:.1f}%<extra>%{y}</extra>",
    }];
    (data.lostKeys || []).forEach((key) => {
      traces.push({
        type: "bar", orientation: "h", name: key, y: labels, x: rows.map((r) => (r.parts || {})[key] || 0),
        marker: { color: lostColour(data, key) }, hovertemplate: key + " %{x:.1f}%<extra>%{y}</extra>",
      });
    });
    draw("chart-lost", traces, {
      barmode: "stack", height: Math.max(200, 60 + 36 * rows.length),
      xaxis: Object.assign(axisTitle("% of the maximum score"), { range: [0, 100] }),
      yaxis: { automargin: true, autorange: "reversed" }, margin: { l: 20, r: 20, t: 10, b: 50 },
      legend: { traceorder: "normal" },
    });
  }

  function drawCurves(data) {
    const curves = data.curves || [];
    // A curve needs two repeats at least (the page says so when no model has them).
    const traces = curves.filter((c) => c.n.length >= 2).map((c) => ({
      type: "scatter", mode: "lines+markers", name: c.label, x: c.n, y: c.value, customdata: c.scenarios,
      hovertemplate: "N = %{x}: %{y:.2f} (%{customdata} scenarios)<extra>" + c.label + "</extra>",
    }));
    // The legend names the models even when one curve is drawn; the score axis reaches 0, so that a small gain from
    // more repeats is not stretched over the whole height of the chart.
    draw("chart-best-of-n", traces, {
      showlegend: true,
      xaxis: Object.assign(axisTitle("N (repeats drawn)"), { dtick: 1 }),
      yaxis: Object.assign(axisTitle("expected best " + (data.scoreLabel || "score").toLowerCase()),
        { rangemode: "tozero" }),
    });
  }

  function drawTags(data) {
    (data.tags || []).forEach((group, index) => {
      const values = group.values.map(String);
      const traces = group.series.map((s) => ({
        type: "bar", name: s.label, x: values, y: s.means, customdata: s.counts,
        hovertemplate: group.label + " %{x}: %{y:.2f} (%{customdata} scenarios)<extra>" + s.label + "</extra>",
      }));
      draw("chart-tag-" + index, traces, {
        barmode: "group", xaxis: Object.assign(axisTitle(group.label), { type: "category" }),
        yaxis: axisTitle("mean " + (data.scoreLabel || "score").toLowerCase()),
      });
    });
  }

  // An environment's own panels (EnvironmentPlugin.analysis_panels): each panel's script, loaded
  // by the page before this one, registers its drawing function under the panel's key, and is
  // handed its data and the helpers that give it the look of the other charts.
  function drawPanels(data) {
    const panels = window.MageAnalysisPanels || {};
    Object.keys(data.panels || {}).forEach((key) => {
      if (typeof panels[key] !== "function") return;
      panels[key](data.panels[key], {
        Plotly: Plotly, config: CONFIG, theme: theme, layout: layout, scoreLabel: data.scoreLabel || "",
        scoreColours: SCORE_COLOURS,
      });
    });
  }

  function drawComparison(data) {
    const points = data.points || [];
    if (!points.length) return;
    const values = points.flatMap((p) => [p.a, p.b]);
    const low = Math.min.apply(null, values);
    const high = Math.max.apply(null, values);
    const pad = (high - low) * 0.05 || 1;
    const range = [low - pad, high + pad];
    draw("chart-compare", [
      { type: "scatter", mode: "lines", name: "A = B", x: range, y: range, hoverinfo: "skip",
        line: { color: "#8a94a3", dash: "dash", width: 1 } },
      { type: "scatter", mode: "markers", name: "scenario", x: points.map((p) => p.a), y: points.map((p) => p.b),
        text: points.map((p) => p.key), marker: { size: 9, color: "#2457c5", opacity: 0.75 },
        hovertemplate: "%{text}<br>A %{x:.2f} · B %{y:.2f}<extra></extra>" },
    ], {
      // Equal scales on a square plot area, so the diagonal really is A = B at 45°.
      height: 460, showlegend: false, margin: { l: 70, r: 20, t: 20, b: 60 },
      xaxis: Object.assign(axisTitle("A: " + data.a), { range: range, zeroline: false, constrain: "domain" }),
      yaxis: Object.assign(axisTitle("B: " + data.b), { range: range, zeroline: false, scaleanchor: "x",
        scaleratio: 1, constrain: "domain" }),
    });
  }

  function drawAnalysis(analysis) {
    drawErrors(analysis);
    drawLost(analysis);
    drawCurves(analysis);
    drawTags(analysis);
    drawPanels(analysis);
  }

  const comparison = readJson("compare-data");
  if (comparison && Plotly) drawComparison(comparison);

  const source = document.getElementById("analysis-charts");
  const charts = Array.from(document.querySelectorAll(".analysis-section .chart"));
  if (source && charts.length) {
    window.MageWhenNear(charts, () => {
      const data = fetch(source.dataset.src, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then((response) => (response.ok ? response.json() : null));
      Promise.all([window.MageLoadPlotly(source.dataset.plotly), data]).then(([loaded, analysis]) => {
        Plotly = loaded;
        if (Plotly && analysis) drawAnalysis(analysis);
      }).catch(() => {});
    });
  }
})();

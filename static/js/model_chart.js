// A model page's chart: each environment's best mean with its 95% interval, from the JSON the server embeds.
(function () {
  "use strict";
  const Plotly = window.Plotly;
  const node = document.getElementById("model-chart");
  const source = document.getElementById("model-chart-data");
  if (!Plotly || !node || !source) return;
  const points = JSON.parse(source.textContent);
  const hasInterval = (p) => p.low !== null && p.high !== null;
  const trace = {
    type: "bar",
    x: points.map((p) => p.env),
    y: points.map((p) => p.mean),
    text: points.map((p) => p.mean.toFixed(2)),
    textposition: "outside",
    marker: { color: points.map((p) => (p.complete ? "#4d7cc9" : "#c9a94d")) },
    error_y: {
      type: "data", symmetric: false, visible: true,
      array: points.map((p) => (hasInterval(p) ? p.high - p.mean : 0)),
      arrayminus: points.map((p) => (hasInterval(p) ? p.mean - p.low : 0)),
    },
    customdata: points.map((p) => [p.label, p.board, hasInterval(p) ? `[${p.low.toFixed(2)}, ${p.high.toFixed(2)}]` : "n/a"]),
    hovertemplate: "%{x} (%{customdata[1]})<br>%{customdata[0]}: %{y:.2f}<br>95% CI %{customdata[2]}<extra></extra>",
  };
  node.style.height = "320px";
  const theme = window.MageTheme ? window.MageTheme.plotly : (options) => options;
  Plotly.newPlot(node, [trace], theme({
    autosize: true, margin: { l: 60, r: 20, t: 20, b: 50 },
    yaxis: { title: { text: "best mean" }, rangemode: "tozero" },
    font: { family: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", size: 12 },
  }), { displayModeBar: false, responsive: true });
})();

// The score-against-cost chart of a board's cost page, drawn from the JSON the server embeds.
(function () {
  "use strict";
  const Plotly = window.Plotly;
  const node = document.getElementById("chart-cost");
  const source = document.getElementById("cost-data");
  if (!Plotly || !node || !source) return;
  let data;
  try {
    data = JSON.parse(source.textContent);
  } catch (error) {
    return;
  }
  const points = data.points || [];
  if (!points.length) return;

  const usd = data.axis === "usd";
  function shownCost(value) {
    return usd ? "$" + value.toFixed(4) : Math.round(value).toLocaleString("en") + " tokens";
  }

  function trace(name, rows, marker) {
    return {
      type: "scatter", mode: "markers", name: name,
      x: rows.map((p) => p.x), y: rows.map((p) => p.y),
      text: rows.map((p) => p.label + " (" + p.team + ")"),
      customdata: rows.map((p) => shownCost(p.x)),
      hovertemplate: "%{text}<br>%{customdata}<br>score %{y:.2f}<extra></extra>",
      // The 95% interval around each mean, which need not be symmetric (a bootstrap).
      error_y: {
        type: "data", symmetric: false, thickness: 1, width: 3, color: marker.color,
        array: rows.map((p) => (p.high === null ? 0 : p.high - p.y)),
        arrayminus: rows.map((p) => (p.low === null ? 0 : p.y - p.low)),
      },
      marker: marker,
    };
  }

  const frontierRows = points.filter((p) => p.frontier);
  const otherRows = points.filter((p) => !p.frontier);
  const traces = [];
  if (otherRows.length) {
    traces.push(trace("dominated", otherRows, { color: "#7c8ba1", size: 9, symbol: "circle-open", line: { width: 2 } }));
  }
  traces.push({
    type: "scatter", mode: "lines", name: "Pareto frontier", hoverinfo: "skip",
    x: (data.frontier || []).map((p) => p[0]), y: (data.frontier || []).map((p) => p[1]),
    line: { color: "#1f7a46", width: 2, shape: "hv" },
  });
  traces.push(trace("on the frontier", frontierRows, { color: "#1f7a46", size: 12, symbol: "diamond" }));

  const costs = points.map((p) => p.x).filter((x) => x > 0);
  // Costs of different models often differ by orders of magnitude: a log axis keeps the cheap ones apart.
  const logAxis = costs.length > 1 && Math.max.apply(null, costs) / Math.min.apply(null, costs) > 100
    && costs.length === points.length;
  const layout = {
    font: { family: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", size: 12 },
    margin: { l: 60, r: 20, t: 20, b: 50 },
    legend: { orientation: "h", y: -0.2 }, autosize: true,
    xaxis: { title: { text: data.x_label + (logAxis ? " (log scale)" : "") }, type: logAxis ? "log" : "linear",
      automargin: true, rangemode: "tozero" },
    yaxis: { title: { text: data.y_label }, automargin: true },
  };
  node.style.height = "420px";
  const theme = window.MageTheme ? window.MageTheme.plotly : (options) => options;
  Plotly.newPlot(node, traces, theme(layout), { displayModeBar: false, responsive: true });
})();

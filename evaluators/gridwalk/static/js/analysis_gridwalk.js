// GridWalk's panel of a board's analysis page: each model's mean score by the length of the level's
// shortest route, one line per model (evaluators/gridwalk/templates/gridwalk/analysis_route.html).
// static/js/analysis.js calls it with the panel's data once the charts' data is fetched.
(function () {
  "use strict";

  function drawRouteLength(data, chart) {
    const node = document.getElementById("chart-route-length");
    const models = (data && data.models || []).filter((m) => Array.isArray(m.distances) && m.distances.length);
    if (!node || !models.length) return;
    const traces = models.map((m) => ({
      type: "scatter", mode: "lines+markers", name: m.label, x: m.distances, y: m.means, customdata: m.counts,
      hovertemplate: "d₀ = %{x}: %{y:.2f} (%{customdata} levels)<extra>" + m.label + "</extra>",
    }));
    const layout = chart.layout(node, {
      xaxis: { title: { text: data.axis }, dtick: 1, automargin: true },
      yaxis: { title: { text: "mean " + (chart.scoreLabel || "score").toLowerCase() }, rangemode: "tozero", automargin: true },
    });
    chart.Plotly.newPlot(node, traces, layout, chart.config);
  }

  window.MageAnalysisPanels = window.MageAnalysisPanels || {};
  window.MageAnalysisPanels.route_length = drawRouteLength;
})();

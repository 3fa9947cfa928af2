// Football's panel of a board's analysis page: a model's mean score per pitch zone as a heatmap,
// the model picked in the panel's list (evaluators/football/templates/football/analysis_zones.html).
// static/js/analysis.js calls it with the panel's data once the charts' data is fetched.
(function () {
  "use strict";

  function drawZones(zones, chart) {
    const node = document.getElementById("chart-zones");
    const select = document.getElementById("zone-model");
    if (!zones || !zones.models.length || !node) return;
    const all = zones.models.flatMap((m) => m.means.flat()).filter((v) => v !== null);
    const low = Math.min.apply(null, all.length ? all : [0]);
    const high = Math.max.apply(null, all.length ? all : [1]);

    function trace(model) {
      const text = zones.names.map((row, lane) => row.map((name, third) => {
        const value = model.means[lane][third];
        return value === null ? name + "<br>—" : name + "<br>" + value.toFixed(2) + " (" + model.counts[lane][third] + ")";
      }));
      return [{
        type: "heatmap", z: model.means, x: zones.thirds.map((t) => t + " third"), y: zones.lanes.map((l) => l + " lane"),
        text: text, texttemplate: "%{text}", hoverinfo: "text", colorscale: chart.scoreColours, zmin: low,
        zmax: high > low ? high : low + 1, xgap: 3, ygap: 3, colorbar: { title: { text: chart.scoreLabel } },
      }];
    }

    // The list names the models by submission id: on a page of the analysis it lists every entry,
    // while the data holds only those with a grid.
    function picked() {
      const id = select ? Number(select.value) : NaN;
      return zones.models.find((m) => m.id === id) || zones.models[0];
    }

    const zoneLayout = chart.layout(node, { height: 360, yaxis: { autorange: "reversed", automargin: true, showgrid: false, zeroline: false },
      xaxis: { side: "bottom", automargin: true, showgrid: false, zeroline: false }, margin: { l: 20, r: 20, t: 10, b: 40 } });
    chart.Plotly.newPlot(node, trace(picked()), zoneLayout, chart.config);
    if (select) {
      select.addEventListener("change", () => {
        chart.Plotly.react(node, trace(picked()), chart.theme(zoneLayout), chart.config);
      });
    }
  }

  window.MageAnalysisPanels = window.MageAnalysisPanels || {};
  window.MageAnalysisPanels.zones = drawZones;
})();

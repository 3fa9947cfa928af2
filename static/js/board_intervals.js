// A board's interval chart: each entry's mean with its 95% bootstrap interval as a horizontal
// whisker, from the JSON the server embeds. plotly.js (the partial bundle the page names) is loaded
// once the chart is near the screen, so that a board read from its top costs no chart library.
(function () {
  "use strict";
  const node = document.getElementById("board-intervals-chart");
  const source = document.getElementById("board-intervals-data");
  if (!node || !source) return;
  let points;
  try {
    points = JSON.parse(source.textContent);
  } catch (error) {
    return;
  }
  if (!points.length) return;

  const colours = { ranked: "#4d7cc9", baseline: "#7c8ba1", unranked: "#c9a94d" };
  const names = { ranked: "ranked", baseline: "baseline", unranked: "not ranked" };

  // Entries are placed by their position on the board (0 at the top); the axis names them.
  points.forEach((p, index) => { p.position = index; });

  // A phone has room beside the chart for the entry's name only (no team), cut to about half the chart's
  // width; the whole label is in the hover text.
  function axisLabel(p, narrow, room) {
    const label = narrow ? (p.name || p.label) : p.label;
    return label.length <= room ? label : label.slice(0, room - 1) + "…";
  }

  function trace(kind) {
    const rows = points.filter((p) => p.kind === kind);
    return {
      type: "scatter", mode: "markers", name: names[kind],
      x: rows.map((p) => p.mean), y: rows.map((p) => p.position), text: rows.map((p) => p.label),
      marker: { color: colours[kind], size: 8 },
      error_x: {
        type: "data", symmetric: false, thickness: 1.5, width: 4, color: colours[kind],
        array: rows.map((p) => p.high - p.mean), arrayminus: rows.map((p) => p.mean - p.low),
      },
      customdata: rows.map((p) => [p.low.toFixed(2), p.high.toFixed(2),
        p.rank_low === null ? "–" : (p.rank_low === p.rank_high ? String(p.rank_low) : p.rank_low + "–" + p.rank_high)]),
      hovertemplate: "%{text}<br>mean %{x:.2f}, 95% CI [%{customdata[0]}, %{customdata[1]}]<br>rank 95%: %{customdata[2]}<extra></extra>",
    };
  }

  function draw(Plotly) {
    const kinds = ["ranked", "baseline", "unranked"].filter((kind) => points.some((p) => p.kind === kind));
    // One line per entry; the names are the axis labels, which plotly's automargin fits beside it.
    node.style.height = Math.max(180, 70 + 22 * points.length) + "px";
    const narrow = node.clientWidth < 600;
    const room = narrow ? Math.max(22, Math.floor(node.clientWidth / 12)) : 60;
    const theme = window.MageTheme ? window.MageTheme.plotly : (options) => options;
    Plotly.newPlot(node, kinds.map(trace), theme({
      autosize: true, margin: { l: 10, r: 15, t: 10, b: 45 }, showlegend: kinds.length > 1,
      legend: { orientation: "h", y: -0.12 },
      xaxis: { title: { text: "mean score" }, automargin: true, zeroline: false },
      // The board's order, top to bottom, whatever order the traces hold the entries in.
      yaxis: { autorange: "reversed", tickmode: "array", tickvals: points.map((p) => p.position),
        ticktext: points.map((p) => axisLabel(p, narrow, room)), automargin: true, tickfont: { size: 11 },
        zeroline: false, showgrid: false },
      font: { family: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", size: 12 },
    }), { displayModeBar: false, responsive: true });
  }

  window.MageWhenNear([node], () => {
    window.MageLoadPlotly(node.dataset.plotly).then(draw).catch(() => {});
  });
})();

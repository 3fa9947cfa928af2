// A model page's chart: each environment's best mean with its 95% interval, one panel per environment on its own
// score axis (environments score on their own scales), from the JSON the server embeds. The server fits each axis
// (leaderboard/selectors/model_page.py model_chart_data) and says where the value's label goes: beyond the end of
// the bar and of its whisker, so that neither covers it.
(function () {
  "use strict";
  const Plotly = window.Plotly;
  const node = document.getElementById("model-chart");
  const source = document.getElementById("model-chart-data");
  if (!Plotly || !node || !source) return;
  const panels = JSON.parse(source.textContent);
  const hasInterval = (p) => p.low !== null && p.high !== null;
  const count = panels.length;
  // On a narrow screen side-by-side panels leave each axis title no room but the neighbour's bars: stack them.
  const stacked = (node.clientWidth || 800) < 600 && count > 1;
  const PANEL_HEIGHT = 240;
  const height = stacked ? 70 + PANEL_HEIGHT * count : 320;
  const gap = count > 1 ? (stacked ? 60 / (height - 70) : 0.12 / (count - 1)) : 0;
  const width = (1 - gap * (count - 1)) / count;
  const layout = {
    autosize: true, margin: { l: 50, r: 12, t: 20, b: 50 }, showlegend: false,
    font: { family: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", size: 12 },
    annotations: [],
  };
  const traces = panels.map((p, i) => {
    const suffix = i === 0 ? "" : String(i + 1);
    const start = i * (width + gap);
    // Stacked, the first panel is the top one.
    const own = stacked ? [1 - start - width, 1 - start] : [start, start + width];
    layout["xaxis" + suffix] = { domain: stacked ? [0, 1] : own, anchor: "y" + suffix, fixedrange: true };
    layout["yaxis" + suffix] = { anchor: "x" + suffix, range: p.range, fixedrange: true, automargin: true,
      title: { text: p.label, standoff: 4 } };
    if (stacked) layout["yaxis" + suffix].domain = own;
    const above = p.label_side === "above";
    layout.annotations.push({
      xref: "x" + suffix, yref: "y" + suffix, x: p.env, y: p.label_y, text: p.mean.toFixed(2), showarrow: false,
      yanchor: above ? "bottom" : "top", yshift: above ? 6 : -6, font: { size: 12 }, name: "value-" + i,
    });
    return {
      type: "bar", x: [p.env], y: [p.mean], xaxis: "x" + suffix, yaxis: "y" + suffix, name: p.env,
      marker: { color: p.complete ? "#4d7cc9" : "#c9a94d" },
      error_y: {
        type: "data", symmetric: false, visible: true,
        array: [hasInterval(p) ? p.high - p.mean : 0], arrayminus: [hasInterval(p) ? p.mean - p.low : 0],
      },
      customdata: [[p.label, p.board, hasInterval(p) ? `[${p.low.toFixed(2)}, ${p.high.toFixed(2)}]` : "n/a"]],
      hovertemplate: "%{x} (%{customdata[1]})<br>%{customdata[0]}: %{y:.2f}<br>95% CI %{customdata[2]}<extra></extra>",
    };
  });
  node.style.height = height + "px";
  const theme = window.MageTheme ? window.MageTheme.plotly : (options) => options;
  Plotly.newPlot(node, traces, theme(layout), { displayModeBar: false, responsive: true });
})();

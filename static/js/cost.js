// Score-against-cost charts (a board's cost page, and one per board on the page across environments),
// each drawn from the JSON the server embeds beside it (data-cost-chart names its script element).
(function () {
  "use strict";
  const Plotly = window.Plotly;
  if (!Plotly) return;

  const shortName = (name, narrow) => {
    const most = narrow ? 16 : 22;
    return name.length > most ? name.slice(0, most - 1) + "…" : name;
  };

  // Where a point's label goes: toward the middle of the plot, so that it stays inside it. A point in the left
  // half has its label on its right (the right half: on its left); one in the upper half has it below (the lower
  // half: above). Never level with the point: the frontier's step line runs level from each of its points.
  function labelPlaces(points, place, yRange) {
    const xs = points.map(place);
    const xLow = Math.min(...xs), xHigh = Math.max(...xs);
    const [yLow, yHigh] = yRange;
    return new Map(points.map((p, i) => {
      const right = xHigh === xLow ? true : (xs[i] - xLow) / (xHigh - xLow) <= 0.5;
      const below = yHigh === yLow ? true : (p.y - yLow) / (yHigh - yLow) > 0.5;
      return [p, (below ? "bottom " : "top ") + (right ? "right" : "left")];
    }));
  }

  function figure(data, narrow) {
    const points = data.points || [];
    const usd = data.axis === "usd";
    const shownCost = (value) => (usd ? "$" + value.toFixed(4) : Math.round(value).toLocaleString("en") + " tokens");
    // The server fits the cost axis to the costs (scoring/cost.py cost_axis): log only when they span an order of
    // magnitude or more. A cost of 0 has no place on a log axis: such entries are drawn at its floor, a decade below
    // the cheapest other, and say so; a linear axis draws them at 0.
    const axis = data.x_axis || { log: false, range: null, floor: 0 };
    const logAxis = axis.log;
    const floor = axis.floor;
    const placeX = (x) => (logAxis && x <= 0 ? floor : x);
    const lows = points.map((p) => (p.low === null ? p.y : p.low));
    const highs = points.map((p) => (p.high === null ? p.y : p.high));
    const position = labelPlaces(points, (p) => (logAxis ? Math.log10(placeX(p.x)) : placeX(p.x)),
      [Math.min(...lows), Math.max(...highs)]);

    function trace(name, rows, marker) {
      return {
        type: "scatter", mode: "markers+text", name: name,
        x: rows.map((p) => placeX(p.x)), y: rows.map((p) => p.y),
        text: rows.map((p) => shortName(p.label, narrow)), textposition: rows.map((p) => position.get(p)),
        textfont: { size: narrow ? 10 : 11 }, cliponaxis: false,
        hovertext: rows.map((p) => p.label + " (" + p.team + ")<br>" + (p.x <= 0 ? "free: " : "") + shownCost(p.x)),
        hovertemplate: "%{hovertext}<br>score %{y:.2f}<extra></extra>",
        // The 95% interval around each mean, which need not be symmetric (a bootstrap).
        error_y: {
          type: "data", symmetric: false, thickness: 1, width: 3, color: marker.color,
          array: rows.map((p) => (p.high === null ? 0 : p.high - p.y)),
          arrayminus: rows.map((p) => (p.low === null ? 0 : p.y - p.low)),
        },
        marker: marker,
      };
    }

    const traces = [];
    const otherRows = points.filter((p) => !p.frontier);
    if (otherRows.length) {
      traces.push(trace("dominated", otherRows, { color: "#7c8ba1", size: 9, symbol: "circle-open", line: { width: 2 } }));
    }
    traces.push({
      type: "scatter", mode: "lines", name: "Pareto frontier", hoverinfo: "skip",
      x: (data.frontier || []).map((p) => placeX(p[0])), y: (data.frontier || []).map((p) => p[1]),
      line: { color: "#1f7a46", width: 2, shape: "hv" },
    });
    traces.push(trace("on the frontier", points.filter((p) => p.frontier),
      { color: "#1f7a46", size: 12, symbol: "diamond" }));

    const free = points.filter((p) => p.x <= 0).length;
    const xaxis = { title: { text: data.x_label + (logAxis ? " (log scale)" : "") }, type: logAxis ? "log" : "linear",
      automargin: true };
    // Dollars as plain decimals ($0.001), not SI prefixes (100µ); tokens keep them (20k).
    if (usd) Object.assign(xaxis, { tickprefix: "$", exponentformat: "none" });
    if (axis.range) xaxis.range = logAxis ? axis.range.map((x) => Math.log10(x)) : axis.range.slice();
    const layout = {
      font: { family: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", size: 12 },
      margin: { l: 60, r: 24, t: free && logAxis ? 36 : 20, b: 50 },
      legend: { orientation: "h", x: 0, xref: "container", y: 0, yref: "container", yanchor: "bottom" },
      autosize: true, height: narrow ? 460 : 440,
      xaxis: xaxis, yaxis: { title: { text: data.y_label }, automargin: true },
      annotations: free && logAxis ? [{
        x: Math.log10(floor), xref: "x", y: 1, yref: "paper", yanchor: "bottom", xanchor: "left", showarrow: false,
        text: free + " free entr" + (free === 1 ? "y" : "ies") + " (cost 0) drawn at the axis floor",
        font: { size: 11 },
      }] : [],
      shapes: free && logAxis ? [{ type: "line", xref: "x", yref: "paper", x0: floor, x1: floor, y0: 0, y1: 1,
        line: { color: "#7c8ba1", width: 1, dash: "dot" } }] : [],
    };
    layout.margin.b = 70 + (narrow ? 40 : 20);
    return { traces: traces, layout: layout };
  }

  document.querySelectorAll("[data-cost-chart]").forEach((node) => {
    const source = document.getElementById(node.dataset.costChart);
    if (!source) return;
    let data;
    try {
      data = JSON.parse(source.textContent);
    } catch (error) {
      return;
    }
    if (!(data.points || []).length) return;
    const built = figure(data, (node.clientWidth || 800) < 600);
    // The height goes on the container, not the layout: a responsive plot re-reads its container's size on every
    // window resize, and a container without a height would shrink the chart to plotly's 200 px default.
    node.style.height = built.layout.height + "px";
    delete built.layout.height;
    const theme = window.MageTheme ? window.MageTheme.plotly : (options) => options;
    Plotly.newPlot(node, built.traces, theme(built.layout), { displayModeBar: false, responsive: true });
  });
})();

// The page's colour scheme for charts. Colours are defined once, as custom properties in site.css
// (light by default, dark under prefers-color-scheme: dark); charts read them here instead of
// hard-coding their own, and follow the system setting when it changes while the page is open.
(function () {
  "use strict";
  const query = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

  function property(name, fallback) {
    const value = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
    return value || fallback;
  }

  // The scheme's chart colours, read from site.css at the moment of the call.
  function colours() {
    return {
      dark: Boolean(query && query.matches),
      background: property("--surface", "#fff"),
      text: property("--fg", "#1d2330"),
      muted: property("--muted", "#5f6b7a"),
      grid: property("--chart-grid", "#eef1f5"),
      zeroline: property("--chart-zeroline", "#c5cdd8"),
      accent: property("--accent", "#2457c5"),
    };
  }

  function axisNames(layout) {
    const names = Object.keys(layout || {}).filter((key) => /^[xy]axis\d*$/.test(key));
    return names.length ? names : ["xaxis", "yaxis"];
  }

  // A plotly layout in the scheme's colours: backgrounds, text, grid lines and colour bars. Explicit
  // colours the layout already has on its axes stay; its backgrounds and text colour are replaced.
  function plotly(layout) {
    const c = colours();
    const themed = Object.assign({}, layout, {
      paper_bgcolor: c.background, plot_bgcolor: c.background,
      font: Object.assign({}, (layout || {}).font, { color: c.text }),
    });
    axisNames(layout).forEach((name) => {
      themed[name] = Object.assign({ gridcolor: c.grid, zerolinecolor: c.zeroline, linecolor: c.zeroline },
        (layout || {})[name]);
    });
    if (themed.legend) themed.legend = Object.assign({}, themed.legend, { bgcolor: "rgba(0,0,0,0)" });
    return themed;
  }

  // The same colours as a relayout update, for a chart already drawn.
  function update(node) {
    const c = colours();
    const changes = { paper_bgcolor: c.background, plot_bgcolor: c.background, "font.color": c.text };
    axisNames(node.layout).forEach((name) => {
      changes[name + ".gridcolor"] = c.grid;
      changes[name + ".zerolinecolor"] = c.zeroline;
      changes[name + ".linecolor"] = c.zeroline;
    });
    return changes;
  }

  const listeners = [];
  if (query) {
    const changed = () => {
      if (window.Plotly) {
        document.querySelectorAll(".js-plotly-plot").forEach((node) => window.Plotly.relayout(node, update(node)));
      }
      listeners.forEach((listener) => listener(colours()));
    };
    if (query.addEventListener) query.addEventListener("change", changed);
    else if (query.addListener) query.addListener(changed);
  }

  window.MageTheme = {
    colours: colours,
    plotly: plotly,
    // Charts (or canvases) with colours of their own beyond the layout's redraw themselves here.
    onChange: (listener) => { listeners.push(listener); },
  };
})();

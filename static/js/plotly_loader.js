// plotly.js is large: the pages that draw charts add the bundle they name once a chart is on screen,
// as a script from the site's own origin (what the Content-Security-Policy allows), and only once.
(function () {
  "use strict";
  window.MageLoadPlotly = function (src) {
    if (window.Plotly) return Promise.resolve(window.Plotly);
    return new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = src;
      script.addEventListener("load", () => resolve(window.Plotly));
      script.addEventListener("error", reject);
      document.head.appendChild(script);
    });
  };
})();

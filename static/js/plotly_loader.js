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
  // Calls start once, when the first of nodes comes within 300 px of the screen (at once where the
  // browser cannot tell).
  window.MageWhenNear = function (nodes, start) {
    let started = false;
    const once = () => {
      if (started) return;
      started = true;
      start();
    };
    if (!("IntersectionObserver" in window)) {
      once();
      return;
    }
    const watcher = new IntersectionObserver((seen) => {
      if (seen.some((entry) => entry.isIntersecting)) {
        watcher.disconnect();
        once();
      }
    }, { rootMargin: "300px 0px" });
    nodes.forEach((node) => watcher.observe(node));
  };
})();

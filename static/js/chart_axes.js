// Axis ranges for a chart with two y-axes: both put zero at the same height and tick at round steps.
(function (root) {
  "use strict";

  // The round step (1, 2 or 5 times a power of ten) nearest above `raw`.
  function niceStep(raw) {
    if (!(raw > 0) || !isFinite(raw)) return 1;
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    const fraction = raw / power;
    const nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10;
    return Number((nice * power).toPrecision(12));
  }

  // Steps of `step` below and above zero that cover the values (zero always included).
  function extent(values, intervals) {
    const finite = (values || []).filter((v) => typeof v === "number" && isFinite(v));
    const low = finite.reduce((m, v) => Math.min(m, v), 0);
    const high = finite.reduce((m, v) => Math.max(m, v), 0);
    const step = niceStep((high - low) / intervals || 1 / intervals);
    // The small allowance keeps 0.1 / 0.05 (2.0000000000000004 in floating point) at two steps.
    const below = Math.ceil(-low / step - 1e-9);
    const above = Math.ceil(high / step - 1e-9);
    return { step: step, below: below, above: below + above ? above : 1 };
  }

  // Ranges and tick steps for a left and a right axis: each axis ticks at its own round step, and
  // both get as many steps below zero (and above it) as the one that needs more, so zero sits at the
  // same fraction of the height on both and their grid lines coincide.
  function alignedZeroRanges(left, right, intervals) {
    const n = intervals || 5;
    const a = extent(left, n);
    const b = extent(right, n);
    const below = Math.max(a.below, b.below);
    const above = Math.max(a.above, b.above);
    const axis = (e) => ({
      range: [Number((-below * e.step).toPrecision(12)) || 0, Number((above * e.step).toPrecision(12))],
      dtick: e.step, tick0: 0,
    });
    return { left: axis(a), right: axis(b), zeroFraction: below / (below + above) };
  }

  root.MageChartAxes = { niceStep: niceStep, alignedZeroRanges: alignedZeroRanges };
})(window);

// The run page's charts, drawn from its timeline (/api/runs/<id>/timeline): the iterations' durations
// and marks, and their cost once the run has receipts. Each is drawn in the CSS pixels of its box
// (viewBox = its size), so its text is never stretched or squashed, whatever the screen's width.

/** The chart's width in CSS pixels, made its viewBox (with `height`); 1000 before it is laid out. */
function fitChart(chart, height) {
  const width = Math.max(200, Math.round(chart.getBoundingClientRect().width) || 1000);
  chart.setAttribute("viewBox", `0 0 ${width} ${height}`);
  return width;
}

/** A bar per column, as tall as its longest iteration (the mean inside it), its marks below; a click on one opens its table page. */
function drawTimeline(view, t) {
  const { chart, legend } = view;
  // Bars down to BASE, the marks' four rows under it, the iteration numbers under those.
  const BASE = 170;
  const TOP = 16;
  const LABELS = BASE + 4 + 4 * 8 + 14;
  const W = fitChart(chart, LABELS + 6);
  const nodes = [];
  const n = t.columns.length;
  const width = W / Math.max(1, n);
  const gap = width > 4 ? Math.min(2, width * 0.15) : 0;
  const scale = t.maxMs > 0 ? (BASE - TOP) / t.maxMs : 0;
  t.columns.forEach((c, i) => {
    const [first, last, longest, mean, target, failed, timeouts, gotos, stops, open] = c;
    const x = i * width;
    const height = Math.max(longest > 0 ? 1 : 0.5, longest * scale);
    const bar = svg("rect", { class: `bar c${target % 8}${open ? " open" : ""}`, x, y: BASE - height, width: Math.max(0.6, width - gap), height, "data-first": first, "data-last": last });
    const names = first === last ? `iteration ${first}` : `iterations ${first}–${last}`;
    const marks = [failed && `${failed} failed`, timeouts && "timed out", gotos && `${gotos} goto`, stops && "stop", open && "running"].filter(Boolean).join(", ");
    bar.append(svg("title", {}, `${names} · ${t.targets[target] || ""} · ${first === last ? formatElapsed(longest) : `longest ${formatElapsed(longest)}, mean ${formatElapsed(mean)}`}${marks ? ` · ${marks}` : ""}`));
    nodes.push(bar);
    if (first !== last && mean > 0) {
      const h2 = Math.max(0.5, mean * scale);
      nodes.push(svg("rect", { class: "mean", x, y: BASE - h2, width: Math.max(0.6, width - gap), height: h2 }));
    }
    const mark = (kind, row) => nodes.push(svg("rect", { class: `mark m-${kind}`, x, y: BASE + 4 + row * 8, width: Math.max(1.5, width - gap), height: 6, "data-mark": kind, "data-first": first }));
    if (failed) mark("failed", 0);
    if (timeouts) mark("timeout", 1);
    if (gotos) mark("goto", 2);
    if (stops) mark("stop", 3);
  });
  nodes.push(svg("text", { class: "axis", x: 2, y: 11 }, t.maxMs > 0 ? `longest ${formatElapsed(t.maxMs)}` : ""));
  nodes.push(svg("line", { x1: 0, x2: W, y1: BASE + 0.5, y2: BASE + 0.5, stroke: "#c8ced8" }));
  if (t.perColumn === 1 && width >= 7 * String(t.count).length + 4) {
    // Few iterations: each bar gets its number.
    t.columns.forEach((c, i) => {
      nodes.push(svg("text", { class: "axis", x: i * width + width / 2, y: LABELS, "text-anchor": "middle" }, String(c[0])));
    });
  } else {
    nodes.push(svg("text", { class: "axis", x: 2, y: LABELS }, t.count ? "1" : "no iterations yet"));
    if (t.count > 1) nodes.push(svg("text", { class: "axis", x: W - 2, y: LABELS, "text-anchor": "end" }, `${t.count}${t.perColumn > 1 ? ` · ${t.perColumn} iterations per bar` : ""}`));
  }
  if (!t.count) nodes.push(svg("text", { class: "axis", x: 2, y: LABELS }, "no iterations yet"));
  chart.replaceChildren(...nodes);
  chart.setAttribute("data-columns", String(n));
  chart.setAttribute("data-count", String(t.count));
  legend.replaceChildren(
    ...t.targets.map((name, i) => h("span", {}, h("span", { class: `swatch c${i % 8}` }), name)),
    ...[["failed", "failed"], ["timeout", "timed out"], ["goto", "goto"], ["stop", "stop"]].map(([k, label]) => h("span", {}, h("span", { class: `swatch m-${k}` }), label)),
  );
}

/**
 * Per-column cost bars (billed and estimated side by side, each to the same scale) and the
 * cumulative lines of both, to the scale of the larger total; shown once the run has receipts.
 */
function drawCosts(view, t) {
  const { costs, costSection } = view;
  const BASE = 130;
  const TOP = 14;
  const n = t.columns.length;
  let most = 0;
  let billed = 0;
  let estimate = 0;
  let tokens = 0;
  for (const c of t.columns) {
    most = Math.max(most, c[10] || 0, c[11] || 0);
    billed = addUsd(billed, c[10] || 0);
    estimate = addUsd(estimate, c[11] || 0);
    tokens += c[12] || 0;
  }
  costSection.hidden = most === 0 && tokens === 0;
  if (costSection.hidden) return;
  const W = fitChart(costs, BASE + 20);
  const width = W / Math.max(1, n);
  const nodes = [];
  const scale = most > 0 ? (BASE - TOP) / most : 0;
  const lineScale = Math.max(billed, estimate) > 0 ? (BASE - TOP) / Math.max(billed, estimate) : 0;
  const lines = { billed: [`0,${BASE}`], estimate: [`0,${BASE}`] };
  let sumBilled = 0;
  let sumEstimate = 0;
  t.columns.forEach((c, i) => {
    const [first, last] = c;
    const x = i * width;
    const names = first === last ? `iteration ${first}` : `iterations ${first}–${last}`;
    for (const [kind, usd, offset] of [["billed", c[10] || 0, 0], ["estimate", c[11] || 0, width / 2]]) {
      if (usd <= 0) continue;
      const height = Math.max(1, usd * scale);
      const bar = svg("rect", { class: `cost ${kind}`, x: x + offset, y: BASE - height, width: Math.max(0.3, width / 2 - (width > 4 ? 1 : 0)), height, "data-first": first, "data-usd": usd });
      bar.append(svg("title", {}, `${names} · ${formatUsd(usd)}${kind === "estimate" ? " est." : ""} · ${formatTokens(c[12] || 0)} tokens`));
      nodes.push(bar);
    }
    sumBilled = addUsd(sumBilled, c[10] || 0);
    sumEstimate = addUsd(sumEstimate, c[11] || 0);
    lines.billed.push(`${x + width},${BASE - sumBilled * lineScale}`);
    lines.estimate.push(`${x + width},${BASE - sumEstimate * lineScale}`);
  });
  if (billed > 0) nodes.push(svg("polyline", { class: "cumulative billed", points: lines.billed.join(" "), "data-total": billed }));
  if (estimate > 0) nodes.push(svg("polyline", { class: "cumulative estimate", points: lines.estimate.join(" "), "data-total": estimate }));
  nodes.push(svg("line", { x1: 0, x2: W, y1: BASE + 0.5, y2: BASE + 0.5, stroke: "#c8ced8" }));
  nodes.push(svg("text", { class: "axis", x: 2, y: 11 }, `highest ${formatUsd(most)} per bar`));
  nodes.push(svg("text", { class: "axis", x: W - 2, y: 11, "text-anchor": "end" }, `total ${[costText(billed, estimate), `${formatTokens(tokens)} tokens`].filter(Boolean).join(" · ")}`));
  costs.replaceChildren(...nodes);
  costs.setAttribute("data-billed", String(billed));
  costs.setAttribute("data-estimate", String(estimate));
}

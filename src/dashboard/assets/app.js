// The dashboard page (loopx runs serve): plain DOM and SVG, no framework. Every text that comes
// from a record goes into the page through text nodes (textContent / createTextNode), never as
// HTML, and control characters are shown as visible symbols: a `result` holding markup or
// terminal escapes stays inert. formatElapsed, formatLocalTime, formatUsd, formatTokens, addUsd, FINISHED,
// STATES (every run state) and GOING (the states of a run whose loop is going: its control channel
// answers) are prepended by the server (core's own functions and lists, the resume rule's list). The
// token of the page's URL goes with every request.
"use strict";

const token = new URLSearchParams(location.search).get("token") || "";
const main = document.getElementById("main");
const live = document.getElementById("live");
const PAGE = 50;
const CONTROLS = [
  ["stop", "Stop after this iteration"],
  ["stop-now", "Stop now"],
  ["pause", "Pause"],
  ["continue", "Continue"],
  ["resume", "Resume"],
];

/** Whether a control applies to a run in `state`: a paused run can be continued (or stopped), a stopping one only stopped now. */
function allowed(action, state) {
  switch (action) {
    case "resume":
      // Its loop ended or died, not because it was done: stopped (FINISHED, the server's) or its
      // -n or budget reached (a resume then needs a new -n or budget, which the page does not ask for).
      return !GOING.includes(state) && state !== "unknown" && state !== "limit" && state !== "budget" && !FINISHED.includes(state);
    case "stop-now":
      return GOING.includes(state);
    case "stop":
      return state === "running" || state === "paused";
    case "pause":
      return state === "running";
    case "continue":
      return state === "paused";
  }
  return false;
}

function url(path, params) {
  const u = new URL(path, location.origin);
  u.searchParams.set("token", token);
  for (const [key, value] of Object.entries(params || {})) if (value !== undefined) u.searchParams.set(key, String(value));
  return u.pathname + u.search;
}

/** Control characters (terminal escapes, NUL, ...) as their visible Unicode pictures. */
function visible(text) {
  return String(text).replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => (c === "\u007f" ? "\u2421" : String.fromCharCode(0x2400 + c.charCodeAt(0))));
}

/** An element with attributes and children; strings become text nodes. */
function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "onclick" || key === "onchange") node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children) if (child !== undefined && child !== null) node.append(typeof child === "string" ? document.createTextNode(visible(child)) : child);
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = visible(text);
  return node;
}

async function getJson(path, params) {
  const res = await fetch(url(path, params), { cache: "no-store" });
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return res.json();
}

function elapsed(run) {
  return GOING.includes(run.state) ? Math.max(0, Date.now() - Date.parse(run.start)) : run.durationMs;
}

/** A run's (or a column's) cost in words: billed and estimated side by side, never added up. */
function costText(billed, estimate) {
  return [billed > 0 ? formatUsd(billed) : "", estimate > 0 ? `${formatUsd(estimate)} est.` : ""].filter(Boolean).join(" · ");
}

/** "$0.30 · $3.00 est. · 3.45k tokens" for a run's totals (from its receipts); "" without any. */
function usedText(totals) {
  if (!totals?.receipts) return "";
  const tokens = Object.values(totals.tokens).reduce((sum, n) => sum + n, 0);
  return [costText(totals.costUsd.billed, totals.costUsd.estimate), `${formatTokens(tokens)} tokens`].filter(Boolean).join(" · ");
}

function stateBadge(run) {
  return h("span", { class: `state ${run.state}`, "data-state": run.state }, run.newerVersion ? "newer loopx" : run.state);
}

/** One EventSource for the page: "runs" (all, on connect), "run" (one changed), "removed". */
function subscribe(onRuns, onRun, onRemoved) {
  const source = new EventSource(url("/api/events"));
  source.addEventListener("open", () => {
    live.textContent = "live";
    live.className = "live on";
  });
  source.addEventListener("error", () => {
    live.textContent = "reconnecting…";
    live.className = "live off";
  });
  source.addEventListener("runs", (e) => onRuns(JSON.parse(e.data)));
  source.addEventListener("run", (e) => onRun(JSON.parse(e.data)));
  source.addEventListener("removed", (e) => onRemoved(JSON.parse(e.data)));
}

// ---------------------------------------------------------------------------------------------
// The runs page: every run, newest first, filterable by project and state.

function runsPage() {
  document.title = "loopx runs";
  const runs = new Map();
  const project = h("select", { id: "filter-project", onchange: render }, h("option", { value: "" }, "all projects"));
  const state = h("select", { id: "filter-state", onchange: render }, h("option", { value: "" }, "all states"), ...STATES.map((s) => h("option", { value: s }, s)));
  const body = h("tbody", { id: "runs" });
  const empty = h("div", { class: "empty", hidden: true }, "No runs recorded yet: start one with loopx run <workflow>.");
  main.replaceChildren(
    h("h1", {}, "Runs"),
    h("div", { class: "filters" }, h("label", {}, "Project ", project), h("label", {}, "State ", state)),
    // The table scrolls inside its box on a narrow screen (a phone): the page never scrolls sideways.
    h("div", { class: "table-box" }, h("table", {}, h("thead", {}, h("tr", {}, ...["Run", "State", "Project", "Target", "Started", "Duration", "Iterations", "Cost", "Tokens", "Ending"].map((t, i) => h("th", { class: i >= 5 && i <= 8 ? "num" : undefined }, t)))), body)),
    empty,
  );

  /** Every project and state seen becomes a filter choice (a newer loopx may know more states). */
  function syncFilters() {
    for (const [select, key] of [[project, "project"], [state, "state"]]) {
      const known = new Set([...select.options].map((o) => o.value));
      for (const run of runs.values()) {
        const value = run[key];
        if (!value || known.has(value)) continue;
        known.add(value);
        select.append(h("option", { value }, value));
      }
    }
  }

  function render() {
    const rows = [];
    const sorted = [...runs.values()].sort((a, b) => (a.id < b.id ? 1 : -1));
    for (const run of sorted) {
      if (project.value && run.project !== project.value) continue;
      if (state.value && run.state !== state.value) continue;
      rows.push(
        h(
          "tr",
          { "data-run": run.id, "data-iterations": run.iterations },
          h("td", {}, h("a", { href: url(`/runs/${run.id}`) }, run.id)),
          h("td", {}, stateBadge(run)),
          h("td", { class: "text" }, run.project),
          h("td", {}, run.worktree ? `${run.target} · ${run.worktree.branch}` : run.target),
          h("td", {}, run.start ? formatLocalTime(run.start) : ""),
          h("td", { class: "num", "data-ticking": GOING.includes(run.state) ? run.id : undefined }, formatElapsed(elapsed(run))),
          h("td", { class: "num iterations" }, String(run.iterations) + (run.maxIterations === null || run.maxIterations === undefined ? "" : `/${run.maxIterations}`)),
          h("td", { class: "num cost" }, run.totals ? costText(run.totals.costUsd.billed, run.totals.costUsd.estimate) : ""),
          h("td", { class: "num tokens" }, run.totals ? formatTokens(Object.values(run.totals.tokens).reduce((sum, n) => sum + n, 0)) : ""),
          h("td", {}, run.ending || (run.current ? `iteration ${run.current.n} · ${run.current.target}` : "")),
        ),
      );
    }
    body.replaceChildren(...rows);
    empty.hidden = runs.size > 0;
  }

  subscribe(
    (all) => {
      runs.clear();
      for (const run of all) runs.set(run.id, run);
      syncFilters();
      render();
      document.body.dataset.ready = "1";
    },
    (run) => {
      runs.set(run.id, run);
      syncFilters();
      render();
    },
    (id) => {
      runs.delete(id);
      render();
    },
  );
  setInterval(() => {
    for (const cell of body.querySelectorAll("[data-ticking]")) {
      const run = runs.get(cell.getAttribute("data-ticking"));
      if (run) cell.textContent = formatElapsed(elapsed(run));
    }
  }, 1000);
}

// ---------------------------------------------------------------------------------------------
// A run's page: facts, the iteration running now, controls, the timeline, the iterations table.

function runPage(id) {
  document.title = `loopx run ${id}`;
  let run;
  let from; // highest n of the table page shown; undefined: follow the newest
  let refreshing = false;
  let again = false;

  const facts = h("dl", { class: "facts", id: "facts" });
  const current = h("div", { class: "current", id: "current", hidden: true });
  const answer = h("span", { class: "answer", id: "control-answer" });
  const buttons = CONTROLS.map(([action, label]) => h("button", { type: "button", "data-action": action, onclick: () => control(action, label) }, label));
  const chart = svg("svg", { id: "timeline", viewBox: "0 0 1000 210", preserveAspectRatio: "none", role: "img" });
  const legend = h("div", { class: "legend", id: "legend" });
  const costs = svg("svg", { id: "costs", viewBox: "0 0 1000 150", preserveAspectRatio: "none", role: "img" });
  const costSection = h("div", { id: "cost-section", hidden: true }, h("h2", {}, "Cost"), h("div", { class: "chart" }, costs, h("div", { class: "legend" }, h("span", {}, h("span", { class: "swatch billed" }), "billed"), h("span", {}, h("span", { class: "swatch estimate" }), "estimate (not paid per call)"), h("span", {}, h("span", { class: "swatch line" }), "cumulative"))));
  const pager = h("div", { class: "pager" });
  const body = h("tbody", { id: "iterations" });
  main.replaceChildren(
    h("h1", {}, "Run ", h("span", { id: "run-id" }, id), " ", h("span", { id: "run-state" })),
    facts,
    current,
    h("div", { class: "controls" }, ...buttons, answer),
    h("h2", {}, "Timeline"),
    h("div", { class: "chart" }, chart, legend),
    costSection,
    h("h2", {}, "Iterations"),
    pager,
    h("div", { class: "table-box" }, h("table", {}, h("thead", {}, h("tr", {}, ...["#", "Target", "Duration", "Exit", "Next", "Result"].map((t, i) => h("th", { class: i === 0 || i === 2 ? "num" : undefined }, t)))), body)),
  );
  chart.addEventListener("click", (e) => {
    const first = e.target?.getAttribute?.("data-last");
    if (first) {
      from = Number(first);
      refresh();
    }
  });

  async function control(action, label) {
    answer.textContent = `${label}…`;
    try {
      const res = await fetch(url(`/api/runs/${id}/${action}`), { method: "POST" });
      const body = await res.json();
      answer.textContent = visible(body.message || res.statusText);
    } catch (error) {
      answer.textContent = visible(String(error));
    }
  }

  function showFacts() {
    const state = document.getElementById("run-state");
    state.replaceChildren(stateBadge(run));
    const rows = [
      ["Target", run.target],
      ["Project", run.project],
      ["Started", run.start ? formatLocalTime(run.start) : ""],
      ["Elapsed", formatElapsed(elapsed(run))],
      ["Iterations", String(run.iterations) + (run.maxIterations === null ? "" : ` of at most ${run.maxIterations}`)],
      ["Ended", GOING.includes(run.state) ? "not yet" : run.ending || run.state],
    ];
    if (run.totals) rows.push(["Used", usedText(run.totals)]);
    if (run.worktree) rows.push(["Worktree", `${run.worktree.branch} · ${run.worktree.path}`]);
    if (run.resumed) rows.push(["Resumed", `${formatLocalTime(run.resumed.time)} at iteration ${run.resumed.n} · ${run.resumed.target}`]);
    if (run.message) rows.push(["Message", run.message]);
    rows.push(["Process", `pid ${run.pid} · loopx ${run.version} (${run.runtime})`]);
    facts.replaceChildren(...rows.flatMap(([k, v]) => [h("dt", {}, k), h("dd", { "data-fact": k.toLowerCase() }, v)]));
    current.hidden = !run.current;
    if (run.current) current.replaceChildren(`Iteration ${run.current.n} · ${run.current.target} · running for `, h("span", { id: "current-elapsed" }, formatElapsed(Date.now() - Date.parse(run.current.start))));
    for (const button of buttons) button.disabled = !allowed(button.getAttribute("data-action"), run.state);
  }

  function drawTimeline(t) {
    const W = 1000;
    const BASE = 170;
    const TOP = 16;
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
    if (t.perColumn === 1 && n <= 40) {
      // Few iterations: each bar gets its number.
      t.columns.forEach((c, i) => {
        nodes.push(svg("text", { class: "axis", x: i * width + width / 2, y: 208, "text-anchor": "middle" }, String(c[0])));
      });
    } else {
      nodes.push(svg("text", { class: "axis", x: 2, y: 208 }, t.count ? "1" : "no iterations yet"));
      if (t.count > 1) nodes.push(svg("text", { class: "axis", x: W - 2, y: 208, "text-anchor": "end" }, `${t.count}${t.perColumn > 1 ? ` · ${t.perColumn} iterations per bar` : ""}`));
    }
    if (!t.count) nodes.push(svg("text", { class: "axis", x: 2, y: 208 }, "no iterations yet"));
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
  function drawCosts(t) {
    const W = 1000;
    const BASE = 130;
    const TOP = 14;
    const n = t.columns.length;
    const width = W / Math.max(1, n);
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

  function exitText(row) {
    if (row.durationMs === null) return run && GOING.includes(run.state) && row.n === run.iterations ? "running" : "–";
    if (row.signal) return row.signal;
    return row.exitCode === null ? "error" : String(row.exitCode);
  }

  function drawTable(page) {
    const rows = page.rows.map((row) => {
      const next = [row.goto !== undefined ? `goto ${row.goto}` : "", row.stop ? "stop" : ""].filter(Boolean).join(", ");
      const text = row.result !== undefined ? row.result : row.error || "";
      const more = row.resultBytes !== undefined && row.result !== undefined && row.resultBytes > row.result.length ? " …" : "";
      return h(
        "tr",
        { "data-n": row.n, class: row.flags & 2 ? "failed" : undefined },
        h("td", { class: "num" }, String(row.n)),
        h("td", {}, row.target),
        h("td", { class: "num" }, row.durationMs === null ? "" : formatElapsed(row.durationMs)),
        h("td", {}, exitText(row)),
        h("td", {}, next),
        h("td", { class: "text result" }, text + more, ...(row.notes || []).map((note) => h("div", { class: "note" }, `note ${formatLocalTime(note.time).slice(11)} · ${note.text}`))),
      );
    });
    body.replaceChildren(...rows);
    const newest = page.count;
    const top = page.from;
    const bottom = Math.max(1, top - page.size + 1);
    const go = (n) => () => {
      from = n >= newest ? undefined : n;
      refresh();
    };
    pager.replaceChildren(
      h("button", { type: "button", onclick: go(newest), disabled: top >= newest }, "« newest"),
      h("button", { type: "button", onclick: go(Math.min(newest, top + page.size)), disabled: top >= newest }, "‹ newer"),
      h("span", { id: "page-range" }, newest ? `${top}–${bottom} of ${newest}` : "no iterations yet"),
      h("button", { type: "button", onclick: go(Math.max(1, bottom - 1)), disabled: bottom <= 1 }, "older ›"),
      h("button", { type: "button", onclick: go(Math.min(newest, page.size)), disabled: bottom <= 1 }, "oldest »"),
    );
  }

  /** Fetches the timeline and the table page; one at a time, the latest request wins. */
  async function refresh() {
    if (refreshing) {
      again = true;
      return;
    }
    refreshing = true;
    try {
      const [timeline, page] = await Promise.all([getJson(`/api/runs/${id}/timeline`, { columns: 500 }), getJson(`/api/runs/${id}/iterations`, { from, size: PAGE })]);
      drawTimeline(timeline);
      drawCosts(timeline);
      drawTable(page);
      document.body.dataset.ready = "1";
    } catch (error) {
      main.prepend(h("p", { class: "muted" }, String(error)));
    } finally {
      refreshing = false;
      if (again) {
        again = false;
        setTimeout(refresh, 100);
      }
    }
  }

  getJson(`/api/runs/${id}`).then(
    (found) => {
      run = found;
      showFacts();
    },
    (error) => main.replaceChildren(h("p", { class: "empty" }, String(error))),
  );
  refresh();
  let pending;
  subscribe(
    (all) => {
      const found = all.find((r) => r.id === id);
      if (found) {
        run = found;
        showFacts();
      }
    },
    (changed) => {
      if (changed.id !== id) return;
      run = changed;
      showFacts();
      if (!pending) pending = setTimeout(() => ((pending = undefined), refresh()), 100);
    },
    (removed) => {
      if (removed === id) main.prepend(h("p", { class: "muted" }, "This run's record was removed (only the newest 200 are kept)."));
    },
  );
  setInterval(() => {
    if (!run || !GOING.includes(run.state)) return;
    const cell = facts.querySelector('[data-fact="elapsed"]');
    if (cell) cell.textContent = formatElapsed(elapsed(run));
    const now = document.getElementById("current-elapsed");
    if (now && run.current) now.textContent = formatElapsed(Date.now() - Date.parse(run.current.start));
  }, 1000);
}

document.getElementById("home").setAttribute("href", url("/"));
const match = /^\/runs\/([0-9a-z]+)$/.exec(location.pathname);
if (match) runPage(match[1]);
else runsPage();

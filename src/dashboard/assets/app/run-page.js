// A run's page: facts, the iteration running now, controls, the timeline (run-charts.js), the
// iterations table (run-table.js). Its parts share one view: the page's elements and its state.

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

function runPage(id) {
  document.title = `loopx run ${id}`;
  const view = runView(id);
  getJson(`/api/runs/${id}`).then(
    (found) => {
      view.run = found;
      showFacts(view);
    },
    (error) => main.replaceChildren(h("p", { class: "empty" }, String(error))),
  );
  refresh(view);
  followRun(view);
  // The charts are drawn to their box's width (run-charts.js): again when it changes.
  let resized;
  window.addEventListener("resize", () => {
    clearTimeout(resized);
    resized = setTimeout(() => refresh(view), 150);
  });
}

/** The page's elements, and its state: `run` (the run's summary), `from` (highest n of the table page shown; undefined: follow the newest). */
function runView(id) {
  const view = { id, run: undefined, from: undefined, refreshing: false, again: false };
  view.facts = h("dl", { class: "facts", id: "facts" });
  view.current = h("div", { class: "current", id: "current", hidden: true });
  view.answer = h("span", { class: "answer", id: "control-answer" });
  view.buttons = CONTROLS.map(([action, label]) => h("button", { type: "button", "data-action": action, onclick: () => control(view, action, label) }, label));
  view.chart = svg("svg", { id: "timeline", viewBox: "0 0 1000 226", role: "img" });
  view.legend = h("div", { class: "legend", id: "legend" });
  view.costs = svg("svg", { id: "costs", viewBox: "0 0 1000 150", role: "img" });
  view.costSection = h("div", { id: "cost-section", hidden: true }, h("h2", {}, "Cost"), h("div", { class: "chart" }, view.costs, h("div", { class: "legend" }, h("span", {}, h("span", { class: "swatch billed" }), "billed"), h("span", {}, h("span", { class: "swatch estimate" }), "estimate (not paid per call)"), h("span", {}, h("span", { class: "swatch line" }), "cumulative"))));
  view.pager = h("div", { class: "pager" });
  view.body = h("tbody", { id: "iterations" });
  view.head = h("thead", {});
  main.replaceChildren(
    h("h1", {}, "Run ", h("span", { id: "run-id" }, id), " ", h("span", { id: "run-state" })),
    view.facts,
    view.current,
    h("div", { class: "controls" }, ...view.buttons, view.answer),
    h("h2", {}, "Timeline"),
    h("div", { class: "chart" }, view.chart, view.legend),
    view.costSection,
    h("h2", {}, "Iterations"),
    view.pager,
    h("div", { class: "table-box" }, h("table", {}, view.head, view.body)),
  );
  view.chart.addEventListener("click", (e) => {
    const first = e.target?.getAttribute?.("data-last");
    if (first) {
      view.from = Number(first);
      refresh(view);
    }
  });
  return view;
}

async function control(view, action, label) {
  view.answer.textContent = `${label}…`;
  try {
    const res = await fetch(url(`/api/runs/${view.id}/${action}`), { method: "POST" });
    const body = await res.json();
    view.answer.textContent = visible(body.message || res.statusText);
  } catch (error) {
    view.answer.textContent = visible(String(error));
  }
}

function showFacts(view) {
  const { run, current } = view;
  const state = document.getElementById("run-state");
  state.replaceChildren(stateBadge(run));
  const rows = [
    ["Target", run.target],
    ["Project", run.project],
    ["Started", run.start ? formatLocalTime(run.start) : ""],
    ["Elapsed", durationText(run)],
    ["Iterations", String(run.iterations) + (run.maxIterations === null ? "" : ` of at most ${run.maxIterations}`)],
    ["Ended", GOING.includes(run.state) ? "not yet" : run.ending || run.state],
  ];
  if (run.totals) rows.push(["Used", usedText(run.totals)]);
  if (run.totals?.windows?.length) rows.push(["Usage windows", windowsText(run.totals.windows)]);
  if (run.worktree) rows.push(["Worktree", `${run.worktree.branch} · ${run.worktree.path}`]);
  if (run.sandbox) rows.push(["Sandbox", `${run.sandbox.kind}${run.sandbox.version ? ` ${run.sandbox.version}` : ""} · policy ${run.sandbox.policyDigest}`]);
  if (run.resumed) rows.push(["Resumed", `${formatLocalTime(run.resumed.time)} at iteration ${run.resumed.n} · ${run.resumed.target}`]);
  if (run.message) rows.push(["Message", run.message]);
  // The --on-end hook's outcome; its output lines are the hook's text, shown as text nodes.
  if (run.hook) rows.push(["On-end hook", h("span", {}, `${run.hook.ended} · ${formatElapsed(run.hook.durationMs)}${run.hook.by === "guardian" ? " · run by the guardian" : ""}`, ...run.hook.output.map((line) => h("div", { class: "hook-output" }, line)), run.hook.more ? h("div", { class: "hook-output" }, "…") : undefined)]);
  rows.push(["Process", `pid ${run.pid} · loopx ${run.version} (${run.runtime})`]);
  view.facts.replaceChildren(...rows.flatMap(([k, v]) => [h("dt", {}, k), h("dd", { "data-fact": k.toLowerCase() }, v)]));
  current.hidden = !run.current;
  if (run.current) current.replaceChildren(`Iteration ${run.current.n} · ${run.current.target} · running for `, h("span", { id: "current-elapsed" }, formatElapsed(Date.now() - Date.parse(run.current.start))));
  for (const button of view.buttons) button.disabled = !allowed(button.getAttribute("data-action"), run.state);
}

/** Each usage window's newest reading, in `runs show`'s words (windowWords, the server's) and where it came from. */
function windowsText(windows) {
  return windows.map((w) => `${windowWords(w, formatLocalTime)}${w.source ? ` (${w.source})` : ""}`).join(" · ");
}

/** Fetches the timeline and the table page; one at a time, the latest request wins. */
async function refresh(view) {
  if (view.refreshing) {
    view.again = true;
    return;
  }
  view.refreshing = true;
  try {
    const [timeline, page] = await Promise.all([getJson(`/api/runs/${view.id}/timeline`, { columns: 500 }), getJson(`/api/runs/${view.id}/iterations`, { from: view.from, size: PAGE })]);
    drawTimeline(view, timeline);
    drawCosts(view, timeline);
    drawTable(view, page);
    document.body.dataset.ready = "1";
  } catch (error) {
    main.prepend(h("p", { class: "muted" }, String(error)));
  } finally {
    view.refreshing = false;
    if (view.again) {
      view.again = false;
      setTimeout(() => refresh(view), 100);
    }
  }
}

/** Live updates: the run's summary from the page's event stream, the elapsed times every second. */
function followRun(view) {
  const { id } = view;
  let pending;
  subscribe(
    (all) => {
      const found = all.find((r) => r.id === id);
      if (found) {
        view.run = found;
        showFacts(view);
      }
    },
    (changed) => {
      if (changed.id !== id) return;
      view.run = changed;
      showFacts(view);
      if (!pending) pending = setTimeout(() => ((pending = undefined), refresh(view)), 100);
    },
    (removed) => {
      if (removed === id) main.prepend(h("p", { class: "muted" }, "This run's record was removed (only the newest 200 are kept)."));
    },
  );
  setInterval(() => {
    const { run } = view;
    if (!run || !GOING.includes(run.state)) return;
    const cell = view.facts.querySelector('[data-fact="elapsed"]');
    if (cell) cell.textContent = formatElapsed(elapsed(run));
    const now = document.getElementById("current-elapsed");
    if (now && run.current) now.textContent = formatElapsed(Date.now() - Date.parse(run.current.start));
  }, 1000);
}

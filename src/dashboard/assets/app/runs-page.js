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

  function render() {
    const sorted = [...runs.values()].sort((a, b) => (a.id < b.id ? 1 : -1));
    const shown = shortIds(sorted.map((run) => run.id));
    body.replaceChildren(...sorted.filter((run) => (!project.value || run.project === project.value) && (!state.value || run.state === state.value)).map((run) => runRow(run, shown.get(run.id))));
    empty.hidden = runs.size > 0;
  }

  subscribe(
    (all) => {
      runs.clear();
      for (const run of all) runs.set(run.id, run);
      syncFilters(runs, project, state);
      render();
      document.body.dataset.ready = "1";
    },
    (run) => {
      runs.set(run.id, run);
      syncFilters(runs, project, state);
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

/** Every project and state seen becomes a filter choice (a newer loopx may know more states). */
function syncFilters(runs, project, state) {
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

/**
 * Each id's first 8 characters (its start time), more where those name another run too: what the
 * terminal shows and `loopx runs stop` takes. The whole id is the link's title.
 */
function shortIds(ids) {
  const sorted = [...ids].sort();
  const common = (a, b) => {
    let i = 0;
    while (a && b && i < a.length && a[i] === b[i]) i++;
    return i;
  };
  return new Map(sorted.map((id, i) => [id, id.slice(0, Math.max(8, Math.max(common(id, sorted[i - 1]), common(id, sorted[i + 1])) + 1))]));
}

/** A run's row in the runs table. */
function runRow(run, shown) {
  return h(
    "tr",
    { "data-run": run.id, "data-iterations": run.iterations },
    h("td", {}, h("a", { href: url(`/runs/${run.id}`), title: run.id, class: "run-id" }, shown || run.id)),
    h("td", {}, stateBadge(run)),
    h("td", { class: "text project" }, run.project),
    h("td", {}, run.worktree ? `${run.target} · ${run.worktree.branch}` : run.target),
    h("td", {}, run.start ? formatLocalTime(run.start) : ""),
    h("td", { class: "num", "data-ticking": GOING.includes(run.state) ? run.id : undefined }, durationText(run)),
    h("td", { class: "num iterations" }, String(run.iterations) + (run.maxIterations === null || run.maxIterations === undefined ? "" : `/${run.maxIterations}`)),
    h("td", { class: "num cost" }, run.totals ? costText(run.totals.costUsd.billed, run.totals.costUsd.estimate) : ""),
    h("td", { class: "num tokens" }, run.totals ? formatTokens(Object.values(run.totals.tokens).reduce((sum, n) => sum + n, 0)) : ""),
    h("td", {}, run.ending || (run.current ? `iteration ${run.current.n} · ${run.current.target}` : "")),
  );
}

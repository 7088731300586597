// The run page's iterations table, a page of PAGE rows at a time, newest first, and its pager.

const PAGE = 50;

function exitText(run, row) {
  if (row.durationMs === null) return run && GOING.includes(run.state) && row.n === run.iterations ? "running" : "–";
  if (row.signal) return row.signal;
  return row.exitCode === null ? "error" : String(row.exitCode);
}

/** The header: COST and TOKENS once the run or the page has receipts, as in `runs show`. */
function drawHead(view, costs) {
  const names = ["#", "Target", "Duration", "Exit", "Next", ...(costs ? ["Cost", "Tokens"] : []), "Result"];
  const numeric = new Set(["#", "Duration", "Cost", "Tokens"]);
  view.head.replaceChildren(h("tr", {}, ...names.map((name) => h("th", { class: numeric.has(name) ? "num" : undefined }, name))));
  return names.length;
}

/** One iteration's row: a try a resume ran again is marked "(retry)", as `runs show` marks it. */
function iterationRow(view, row, costs) {
  const next = [row.goto !== undefined ? `goto ${row.goto}` : "", row.stop ? "stop" : ""].filter(Boolean).join(", ");
  const text = row.result !== undefined ? row.result : row.error || "";
  const more = row.resultBytes !== undefined && row.result !== undefined && row.resultBytes > row.result.length ? " …" : "";
  return h(
    "tr",
    { "data-n": row.n, class: row.flags & 2 ? "failed" : undefined },
    h("td", { class: "num" }, String(row.n)),
    h("td", {}, row.retry ? `${row.target} (retry)` : row.target),
    h("td", { class: "num" }, row.durationMs === null ? "" : formatElapsed(row.durationMs)),
    h("td", {}, exitText(view.run, row)),
    h("td", {}, next),
    ...(costs ? [h("td", { class: "num cost" }, costText(row.billed, row.estimate)), h("td", { class: "num tokens" }, row.tokens > 0 ? formatTokens(row.tokens) : "")] : []),
    h("td", { class: "text result" }, text + more, ...(row.notes || []).map((note) => h("div", { class: "note" }, `note ${formatLocalTime(note.time).slice(11)} · ${note.text}`))),
  );
}

/** The table page (/api/runs/<id>/iterations) and the pager's buttons. */
function drawTable(view, page) {
  const costs = Boolean(view.run?.totals?.receipts) || page.rows.some((row) => row.billed > 0 || row.estimate > 0 || row.tokens > 0);
  const width = drawHead(view, costs);
  const rows = page.rows.flatMap((row) => [
    iterationRow(view, row, costs),
    // Newest first: a resume's line goes under the first iteration of its sitting, between the sittings.
    ...(row.resumed || []).map((resume) => h("tr", { class: "resumed", "data-resumed": resume.n }, h("td", { colspan: width }, `── resumed ${formatLocalTime(resume.time)} at ${resume.target} · pid ${resume.pid} ──`))),
  ]);
  view.body.replaceChildren(...rows);
  const newest = page.count;
  const top = page.from;
  const bottom = Math.max(1, top - page.size + 1);
  const go = (n) => () => {
    view.from = n >= newest ? undefined : n;
    refresh(view);
  };
  view.pager.replaceChildren(
    h("button", { type: "button", onclick: go(newest), disabled: top >= newest }, "« newest"),
    h("button", { type: "button", onclick: go(Math.min(newest, top + page.size)), disabled: top >= newest }, "‹ newer"),
    h("span", { id: "page-range" }, newest ? `${top}–${bottom} of ${newest}` : "no iterations yet"),
    h("button", { type: "button", onclick: go(Math.max(1, bottom - 1)), disabled: bottom <= 1 }, "older ›"),
    h("button", { type: "button", onclick: go(Math.min(newest, page.size)), disabled: bottom <= 1 }, "oldest »"),
  );
}

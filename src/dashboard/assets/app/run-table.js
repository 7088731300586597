// The run page's iterations table, a page of PAGE rows at a time, newest first, and its pager.

const PAGE = 50;

function exitText(run, row) {
  if (row.durationMs === null) return run && GOING.includes(run.state) && row.n === run.iterations ? "running" : "–";
  if (row.signal) return row.signal;
  return row.exitCode === null ? "error" : String(row.exitCode);
}

/** The table page (/api/runs/<id>/iterations) and the pager's buttons. */
function drawTable(view, page) {
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
      h("td", {}, exitText(view.run, row)),
      h("td", {}, next),
      h("td", { class: "text result" }, text + more, ...(row.notes || []).map((note) => h("div", { class: "note" }, `note ${formatLocalTime(note.time).slice(11)} · ${note.text}`))),
    );
  });
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

// The dashboard page (loopx runs serve): plain DOM and SVG, no framework. The page's one script,
// /app.js, is the files of src/dashboard/assets/app/ joined in the order scripts/dashboard-assets.mjs
// lists (this one first): one classic script, so their top-level names are shared. Every text that comes
// from a record goes into the page through text nodes (textContent / createTextNode), never as
// HTML, and control characters are shown as visible symbols: a `result` holding markup or
// terminal escapes stays inert. formatElapsed, formatLocalTime, formatUsd, formatTokens, addUsd, windowWords, FINISHED,
// STATES (every run state) and GOING (the states of a run whose loop is going: its control channel
// answers) are prepended by the server (core's own functions and lists, the resume rule's list). The
// token of the page's URL goes with every request. The server puts the strict-mode directive first, before its own code.

const token = new URLSearchParams(location.search).get("token") || "";
const main = document.getElementById("main");
const live = document.getElementById("live");

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

/** A run's duration in words: "≥3.2s" when it is a lower bound (it crashed without a run.end). */
function durationText(run) {
  return `${run.durationAtLeast ? "≥" : ""}${formatElapsed(elapsed(run))}`;
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

/**
 * One EventSource for the page: "runs" (all, on connect), "run" (one changed), "removed". With
 * `live=0` in the URL the page asks once and stays as it is: its network goes idle, which a
 * headless browser's screenshot (`--virtual-time-budget`) waits for.
 */
function subscribe(onRuns, onRun, onRemoved) {
  if (new URLSearchParams(location.search).get("live") === "0") {
    getJson("/api/runs").then((all) => {
      live.textContent = "not live (live=0)";
      onRuns(all);
    });
    return;
  }
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

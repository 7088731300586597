import { lstatSync } from "node:fs";
import { join } from "node:path";
import { otherOwner } from "../os/own-user.js";
import { recordEvent } from "../records/parse.js";
import { summarizeRun, type RunSummary } from "../records/run-state.js";
import type { LiveRuns } from "../records/runs.js";
import { readRecordHead, recordsDir } from "../records/store.js";
import { exchange } from "./client.js";
import { controlDirs, socketIds, socketName } from "./paths.js";
import type { RunStatus } from "./protocol.js";
import type { Env } from "../core/env.js";

/**
 * What going runs say of themselves, for `loopx runs` (loopx's own addition): a record on a full
 * disk lags behind its run (its pause, its iterations), or holds nothing at all (not even its
 * run.start). `loopx runs` shows what their control channels answer to `status`: one connection
 * per going run, none when no run is going.
 */


/** A listing does not wait longer than this for a run to answer. */
const STATUS_TIMEOUT_MS = 2000;

/**
 * What the going runs recorded in `env`'s records directory say of themselves (each is asked once,
 * concurrently): their state and iteration — which their record may lag behind on a full disk —
 * and, for those whose record holds no run.start, their whole row. Runs not recorded by choice
 * (LOOPX_RECORD=0, API runs) and runs recorded elsewhere (another XDG_STATE_HOME sharing a control
 * directory) are not among them.
 */
export async function goingRuns(env: Env): Promise<LiveRuns> {
  const records = recordsDir(env);
  const now = Date.now();
  const live: LiveRuns = { unrecorded: [], going: new Map() };
  const seen = new Set<string>();
  const asked: Array<Promise<void>> = [];
  for (const dir of controlDirs(env)) {
    for (const id of socketIds(dir)) {
      if (seen.has(id)) continue;
      seen.add(id);
      const answered = (status: RunStatus | undefined) => {
        if (status?.records !== records) return;
        live.going.set(id, { state: status.state, iterations: status.iterations });
        const summary = readRecordHead(records, id) === undefined ? summaryOf(id, status, now) : undefined;
        if (summary) live.unrecorded.push(summary);
      };
      asked.push(statusOf(join(dir, socketName(id))).then(answered));
    }
  }
  await Promise.all(asked);
  return live;
}

/** What the run listening on `path` says of itself: only a socket of this user's, answering in time. */
async function statusOf(path: string): Promise<RunStatus | undefined> {
  try {
    const stat = lstatSync(path);
    if (!stat.isSocket() || otherOwner(stat) !== undefined) return undefined;
    const status = (await exchange(path, { op: "status" }, STATUS_TIMEOUT_MS)).status;
    const start = recordEvent(status?.start);
    if (!status || typeof start !== "object" || (start.type !== "run.start" && start.type !== "run.resume")) return undefined;
    if (!Number.isSafeInteger(status.iterations) || !["running", "paused", "stopping"].includes(status.state)) return undefined;
    return { start, iterations: status.iterations, state: status.state, ...(typeof status.records === "string" ? { records: status.records } : {}) };
  } catch {
    return undefined; // gone, or not one of ours
  }
}

/** A row of `loopx runs` for an unrecorded run (a resume always has a record with its run.start). */
function summaryOf(id: string, status: RunStatus, now: number): RunSummary | undefined {
  if (status.start.type !== "run.start" || status.start.run !== id) return undefined;
  const summary = summarizeRun(id, [status.start], () => true, now);
  return summary && { ...summary, state: status.state, iterations: status.iterations, recorded: false };
}

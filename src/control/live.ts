import { lstatSync } from "node:fs";
import { join } from "node:path";
import { otherOwner } from "../os/own-user.js";
import { recordEvent } from "../records/parse.js";
import { summarizeRun, type RunSummary } from "../records/run-state.js";
import { readRecordHead, recordsDir } from "../records/store.js";
import { exchange } from "./client.js";
import { controlDirs, socketIds, socketName } from "./paths.js";
import type { RunStatus } from "./protocol.js";

/**
 * Runs that are going but that no record shows (loopx's own addition): a full disk kept even their
 * record's run.start out, or the records directory could not be made. `loopx runs` lists them from
 * what their control channels answer to `status`. Only the sockets of runs whose record has no
 * first line are asked: listing runs that are recorded connects to none.
 */

type Env = Record<string, string | undefined>;

/** A listing does not wait longer than this for a run to answer. */
const STATUS_TIMEOUT_MS = 2000;

/**
 * The going runs recorded in `env`'s records directory whose record holds no run.start, as their
 * processes describe them. Runs not recorded by choice (LOOPX_RECORD=0, API runs) and runs recorded
 * elsewhere (another XDG_STATE_HOME sharing a control directory) are not among them.
 */
export async function unrecordedRuns(env: Env): Promise<RunSummary[]> {
  const records = recordsDir(env);
  const now = Date.now();
  const seen = new Set<string>();
  const asked: Array<Promise<RunSummary | undefined>> = [];
  for (const dir of controlDirs(env)) {
    for (const id of socketIds(dir)) {
      if (seen.has(id) || readRecordHead(records, id) !== undefined) continue;
      seen.add(id);
      asked.push(statusOf(join(dir, socketName(id))).then((status) => (status?.records === records ? summaryOf(id, status, now) : undefined)));
    }
  }
  return (await Promise.all(asked)).filter((summary) => summary !== undefined);
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

import { existsSync, lstatSync, readFileSync, unlinkSync } from "node:fs";
import { processEnvironment, processRunning, processesWithVariable, type FoundProcess } from "../os/procfs.js";
import { shellWord } from "../core/shell-word.js";
import { shownText } from "../core/untrusted-text.js";
import type { RunSummary } from "./run-state.js";
import { livePath, recordPath } from "./paths.js";
import { listLiveIds, readRecordLastLine } from "./store.js";

/**
 * What a run left behind when loopx and its guardian were both killed (`kill -9` of both, an
 * out-of-memory kill, `kill -9 -1`): no `run.end`, and nobody ended its scripts' processes or
 * removed its LOOPX_TMPDIR. `loopx runs` and the next `loopx run` in its project name the processes
 * still carrying its LOOPX_RUN_ID and offer one command that ends them and removes the scratch
 * directory (named by the run's lifeline file, records/lifeline.ts, or read from their environment).
 * A /proc scan only for a run found dead without a run.end, and only while its guardian is gone too.
 */

/** What `<id>.live` holds (records/lifeline.ts writes it). */
export interface LiveFile {
  /** loopx's pid, and its guardian's (null: it could not be started). */
  pid: number;
  guardian: number | null;
  /** The project the run was started in. */
  project: string;
  /** LOOPX_TMPDIR (null: none). */
  scratch: string | null;
  /** When it was written (ms since 1970): loopx and its guardian had started by then. */
  since: number;
}

/** What a dead run left: the processes still carrying its id, and its scratch directory if it is still there. */
interface Leftovers {
  carriers: FoundProcess[];
  scratch: string | undefined;
}

/** Run `id`'s lifeline file, if it has one that can be read. */
function readLiveFile(dir: string, id: string): LiveFile | undefined {
  try {
    const live = JSON.parse(readFileSync(livePath(dir, id), "utf8")) as LiveFile;
    return typeof live.pid === "number" && typeof live.project === "string" ? live : undefined;
  } catch {
    return undefined;
  }
}

/** True while loopx or the guardian named by `live` runs (a reused pid started later does not count). */
function someoneAlive(live: LiveFile): boolean {
  const by = live.since + 2000;
  return processRunning(live.pid, by) || (live.guardian !== null && processRunning(live.guardian, by));
}

/** A loopx scratch directory that is still there. */
function scratchLeft(path: string | null | undefined): string | undefined {
  if (!path || !/\/loopx-[A-Za-z0-9]+$/.test(path)) return undefined;
  try {
    return lstatSync(path).isDirectory() ? path : undefined;
  } catch {
    return undefined;
  }
}

/** LOOPX_TMPDIR from the first carrier whose environment says it (a loopx scratch directory only). */
function scratchOf(pids: number[]): string | undefined {
  for (const pid of pids) {
    const entry = processEnvironment(pid)
      ?.toString("utf8")
      .split("\0")
      .find((line: string) => line.startsWith("LOOPX_TMPDIR="));
    const path = scratchLeft(entry?.slice("LOOPX_TMPDIR=".length));
    if (path) return path;
  }
  return undefined;
}

/** What dead run `id` left (undefined: nothing); `live`: its lifeline file, if any. */
function leftoversOf(id: string, live: LiveFile | undefined): Leftovers | undefined {
  const carriers = processesWithVariable(`LOOPX_RUN_ID=${id}`);
  const scratch = scratchLeft(live?.scratch) ?? scratchOf(carriers.map((carrier) => carrier.pid));
  return carriers.length > 0 || scratch ? { carriers, scratch } : undefined;
}

/** The line that names what run `id` left and the one command that ends and removes it. */
function leftoverLine(id: string, { carriers, scratch }: Leftovers): string {
  const rm = scratch ? `rm -rf ${shellWord(scratch)}` : "";
  if (carriers.length === 0) return `run ${id} crashed (loopx and its guardian are gone) and left its scratch directory; to remove it: ${rm}`;
  const shown = carriers.map(({ pid, command }) => `${pid} (${shownText(command.length > 40 ? `${command.slice(0, 40)}…` : command)})`).join(", ");
  const command = `kill -TERM ${carriers.map((carrier) => carrier.pid).join(" ")}${rm ? ` && ${rm}` : ""}`;
  return `run ${id} crashed (loopx and its guardian are gone) but ${carriers.length} of its processes still run: ${shown}; to end them${scratch ? " and remove its scratch directory" : ""}: ${command}`;
}

/** `loopx runs`: a line for each listed run that crashed without a run.end and left something. */
export function leftoverLines(dir: string, summaries: RunSummary[]): string {
  let text = "";
  for (const run of summaries) {
    if (run.state !== "crashed" || run.exitCode !== undefined) continue;
    const live = readLiveFile(dir, run.id);
    // Its guardian is still at work: it ends what is left itself.
    if (live && someoneAlive(live)) continue;
    const left = leftoversOf(run.id, live);
    if (left) text += `${leftoverLine(run.id, left)}\n`;
  }
  return text;
}

/**
 * When a run begins (records/lifeline.ts): a line for each other run of `project` whose loopx and
 * guardian are both gone without a run.end and that left processes or its scratch directory. Only
 * the lifeline files in `dir` are looked at (one readdir: normally those of live runs alone); one
 * whose run is over, or has nothing left, is removed, so that it is never looked at again.
 */
export function crashedRunNotices(dir: string, self: string, project: string): string[] {
  let ids: string[];
  try {
    ids = listLiveIds(dir);
  } catch {
    return [];
  }
  const lines: string[] = [];
  for (const id of ids) {
    const live = id === self ? undefined : readLiveFile(dir, id);
    if (!live || live.project !== project || someoneAlive(live)) continue;
    // A last line too long to read from the end is no run.end (that is short).
    const last = readRecordLastLine(dir, id);
    const over = last === undefined ? !existsSync(recordPath(dir, id)) : last.includes('"type":"run.end"');
    const left = over ? undefined : leftoversOf(id, live);
    if (left) lines.push(leftoverLine(id, left));
    else forget(livePath(dir, id));
  }
  return lines;
}

function forget(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Another loopx forgot it first.
  }
}

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { RunPart } from "../core/run-part.js";
import type { RecordEvent, RunStartEvent } from "../core/events.js";
import { parseRecord, recordEvent } from "../records/parse.js";
import { workflowOf } from "../core/target.js";
import { listLiveIds, readRecordEnds, readRecordHead, readRecordLastLine, liveSitting } from "../records/store.js";

/**
 * The warning of a run started without --worktree where another live run of the same workflow
 * works in the same project (loopx's own addition): both would share the working tree, the git
 * index and the workflow's files. One line naming the other run and suggesting --worktree, and a
 * `tree.shared` event in the record. Looked for once, when the run begins, in the records of the
 * runs that have a lifeline (a record's first line first; only a match is read further).
 */


/**
 * The first live run (not `self`) of `workflow` in `projectRoot`, from the records in `dir`. Only
 * runs with a lifeline are read (every live run has one: records/lifeline.ts), not every record.
 */
function liveRunSharing(dir: string, self: string, projectRoot: string, workflow: string): { id: string; pid: number } | undefined {
  for (const id of listLiveIds(dir)) {
    if (id === self) continue;
    const head = readRecordHead(dir, id);
    if (head === undefined || !head.includes(JSON.stringify(projectRoot).slice(1, -1))) continue;
    let start: RecordEvent | number | undefined;
    try {
      start = recordEvent(JSON.parse(head));
    } catch {
      continue;
    }
    if (typeof start !== "object" || start.type !== "run.start" || start.projectRoot !== projectRoot || workflowOf(start.target) !== workflow) continue;
    // Most such records are of runs that ended: their last line says so, read from the end alone.
    if (readRecordLastLine(dir, id)?.includes('"type":"run.end"')) continue;
    let events: RecordEvent[];
    try {
      events = parseRecord(readRecordEnds(dir, id)).events;
    } catch {
      continue;
    }
    const sitting = liveSitting(events);
    if (sitting) return { id, pid: sitting.pid };
  }
  return undefined;
}

/** Whether `dir` is in a git working tree (a `.git` in it or above): only there can --worktree help. */
function inGitRepository(dir: string): boolean {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, ".git"))) return true;
    if (dirname(at) === at) return false;
  }
}

export function sharedTreePart(dir: string): RunPart {
  let start: RunStartEvent | undefined;
  return {
    onEvent(event) {
      if (event.type === "run.start") start = event;
    },
    begin(controls) {
      if (!start) return;
      const workflow = workflowOf(start.target);
      const other = liveRunSharing(dir, controls.id, start.projectRoot, workflow);
      if (!other) return;
      const advice = inGitRepository(start.projectRoot) ? "both share its files and git index; run each with --worktree" : "both share its files";
      controls.warn(`run ${other.id} (pid ${other.pid}) of workflow ${workflow} is working in this tree too: ${advice}`);
      controls.emit({ type: "tree.shared", other: other.id, workflow, pid: other.pid });
    },
  };
}

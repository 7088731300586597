import { unlinkSync, utimesSync, writeFileSync } from "node:fs";
import type { RunPart } from "../core/run-part.js";
import { crashedRunNotices, type LiveFile } from "./leftovers.js";
import { livePath, recordPath } from "./paths.js";
import { projectOf } from "./run-state.js";

/**
 * A run's lifeline (loopx's own addition), for when loopx and its guardian are killed together
 * (`kill -9` of both, an out-of-memory kill, `kill -9 -1`): nobody is then left to end the run's
 * processes, remove its LOOPX_TMPDIR or write its run.end. While the run goes:
 * - `<id>.live` beside its record says who runs it (loopx's pid and its guardian's), its project
 *   and its LOOPX_TMPDIR; the run's end and its guardian remove it. One left behind is how the next
 *   run in its project finds such a run (records/leftovers.ts) without reading every record;
 * - its record's time is touched every HEARTBEAT_MS: the last sign of life that the duration of a
 *   run that crashed without a run.end is counted to (a lower bound, within a second).
 * Costs a small file written and removed per run, and one utimes(2) a second on an unref'd timer;
 * nothing per iteration.
 */

const HEARTBEAT_MS = 1000;

/** What the lifeline is told of the run: its guardian's pid and LOOPX_TMPDIR, once the run has begun. */
export interface LifelineRun {
  guardian(): number | undefined;
  scratch(): string | undefined;
}

/** After the guardian and the scratch directory (it names both), and the record (its directory). */
export function lifelinePart(dir: string, run: LifelineRun): RunPart {
  let project: string | undefined;
  let id: string | undefined;
  let beat: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    if (beat) clearInterval(beat);
    beat = undefined;
    if (id === undefined) return;
    try {
      unlinkSync(livePath(dir, id));
    } catch {
      // Never written (no records directory), or removed already.
    }
    id = undefined;
  };
  return {
    onEvent(event) {
      if (event.type === "run.start") project = projectOf(event);
      else if (event.type === "run.resume") project ??= event.projectRoot;
      else if (event.type === "run.end") stop();
    },
    begin(controls) {
      if (project === undefined) return;
      // A run of this project that died with its guardian and left something: one line each.
      for (const line of crashedRunNotices(dir, controls.id, project)) controls.warn(line);
      const live: LiveFile = { pid: process.pid, guardian: run.guardian() ?? null, project, scratch: run.scratch() ?? null, since: Date.now() };
      id = controls.id;
      try {
        writeFileSync(livePath(dir, id), JSON.stringify(live), { mode: 0o600 });
      } catch {
        // No records directory, or a full disk (the file may be there, empty): nothing to find it by.
        stop();
        return;
      }
      const record = recordPath(dir, controls.id);
      beat = setInterval(() => {
        const now = new Date();
        try {
          utimesSync(record, now, now);
        } catch {
          // Pruned or unwritable: the duration falls back to the last event.
        }
      }, HEARTBEAT_MS);
      beat.unref();
    },
  };
}

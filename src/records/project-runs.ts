import { realpathSync } from "node:fs";
import { recordEvent } from "./parse.js";
import { projectOf } from "./run-state.js";
import { listRecordIds, readRecordHead } from "./store.js";

/** `path`'s real path, or `path` itself when it is gone. */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The ids of the runs recorded in `dir` whose project is `cwd` (either path may be a link), newest
 * first, read from each record's first line only: what `runs show` and `runs tail` complete.
 */
export function projectRunIds(dir: string, cwd: string): string[] {
  const here = real(cwd);
  return listRecordIds(dir).filter((id) => {
    const head = readRecordHead(dir, id);
    if (head === undefined) return false;
    try {
      const start = recordEvent(JSON.parse(head));
      if (typeof start !== "object" || start.type !== "run.start") return false;
      const project = projectOf(start);
      return project === cwd || real(project) === here;
    } catch {
      return false;
    }
  });
}

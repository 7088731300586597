import { LoopxError } from "../core/errors.js";

/** A whole run id (core/run-id.ts newRunId): 9 base-36 digits of its start time, 6 random. */
const WHOLE_RUN_ID = /^[0-9a-z]{15}$/;

/** True for a whole run id (not a prefix of one). */
export function isWholeRunId(text: string): boolean {
  return WHOLE_RUN_ID.test(text);
}

/**
 * The run id `prefix` names, for every command that takes one (records and control alike): the id
 * itself or the only one of `ids` that starts with it; one LoopxError line otherwise (`where`
 * names where the ids were looked for). `wholeIdsAsIs`: a whole id is taken without being among
 * `ids` (the control channel of a run can be reached where its directory cannot be listed).
 */
export function resolveRunId(prefix: string, ids: readonly string[], where: string, wholeIdsAsIs = false): string {
  if (ids.includes(prefix) || (wholeIdsAsIs && isWholeRunId(prefix))) return prefix;
  // An empty prefix names no run, even where there is only one.
  const matches = prefix === "" ? [] : ids.filter((id) => id.startsWith(prefix));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw new LoopxError(`no run ${JSON.stringify(prefix)} in ${where}`);
  throw new LoopxError(`run id ${JSON.stringify(prefix)} is ambiguous: it starts ${matches.length} runs (${matches.slice(0, 3).join(", ")}${matches.length > 3 ? ", ..." : ""})`);
}

/**
 * For each id, the length of its shortest unique prefix among `ids`, at least `min`: what a user
 * has to type (or copy) to name the run.
 */
export function uniquePrefixLengths(ids: string[], min = 6): Map<string, number> {
  const sorted = [...ids].sort();
  const common = (a: string | undefined, b: string | undefined) => {
    if (a === undefined || b === undefined) return 0;
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    return i;
  };
  const lengths = new Map<string, number>();
  sorted.forEach((id, i) => {
    const shared = Math.max(common(id, sorted[i - 1]), common(id, sorted[i + 1]));
    lengths.set(id, Math.min(id.length, Math.max(min, shared + 1)));
  });
  return lengths;
}

import type { Runtime } from "./helpers.js";

/**
 * The rows of a case table that `runtime` runs: every row under Node, every third under Bun (the
 * first included). Such tables vary the input of logic that is the same JavaScript under both
 * runtimes (parsing, naming rules, messages); what differs under Bun (spawning, stdout, signals,
 * loaders) has tests of its own that run in full. Keeps the suite inside CI's time on two cores.
 */
export function tableFor<T>(runtime: Runtime, rows: readonly T[]): T[] {
  return runtime.name === "bun" ? rows.filter((_, index) => index % 3 === 0) : [...rows];
}

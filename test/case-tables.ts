import { type TestFunction, type TestOptions, it } from "vitest";
import type { Runtime } from "./helpers.js";

/*
 * Bun samples what is the same JavaScript under both runtimes. Case tables and test blocks whose
 * subject is loopx's own logic (parsing, naming rules, the loop's state machine, messages, help)
 * run in full under Node and every third case under Bun (the first included); what differs under
 * Bun (spawning, stdout, signals, loaders, the file system under concurrent writers, tar and
 * gzip) has tests of its own that run in full. Keeps the suite inside CI's time on two cores.
 */

/** The rows of a case table that `runtime` runs: all under Node, every third under Bun. */
export function tableFor<T>(runtime: Runtime, rows: readonly T[]): T[] {
  return runtime.name === "bun" ? rows.filter((_, index) => index % 3 === 0) : [...rows];
}

/** A test's declaration, as `it` takes it: a name, then its function and options in either order. */
interface Declare {
  (name: string, fn: TestFunction, options?: number | TestOptions): void;
  (name: string, options: TestOptions, fn: TestFunction): void;
}
type DeclareArgs = [string, TestFunction | TestOptions, (TestFunction | number | TestOptions)?];

/** `it` (and `it.concurrent`) declaring the tests of one block for `runtime`, sampled as tableFor's rows are. */
export interface SampledIt extends Declare {
  concurrent: Declare;
}

/** The tests of a `describe.each(RUNTIMES)` block of logic: all under Node, every third declared under Bun. */
export function itFor(runtime: Runtime): SampledIt {
  let declared = 0;
  const runs = () => runtime.name !== "bun" || declared++ % 3 === 0;
  const declareWith = (declare: (...args: DeclareArgs) => void): Declare => (...args: DeclareArgs) => {
    if (runs()) declare(...args);
  };
  return Object.assign(declareWith(it as (...args: DeclareArgs) => void), { concurrent: declareWith(it.concurrent as (...args: DeclareArgs) => void) });
}

import { type ViteUserConfig, configDefaults, defineConfig } from "vitest/config";

/** Test files that replace modules (vi.mock): each needs a module graph of its own. */
const MOCKING = ["test/unit/engine/run-options.test.ts"];
/** The soak (long runs): it samples loopx through /proc, so Linux only. */
const SOAK = "test/e2e/run/soak.test.ts";

/** What every project below shares. Tests spawn the built CLI (dist/); `npm test` builds first. */
const common: NonNullable<ViteUserConfig["test"]> = {
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: "forks",
  // A test that fails is run once more before it counts as failed. The suite starts thousands of
  // real processes on two busy cores, where a wait that holds on a quiet machine can run out
  // once; a real fault fails both times (and the report lists the retry).
  retry: 1,
  // What a file's helpers made (temp directories, mounts) is undone after its last test; no test
  // can signal its own process group (test/setup/kill-guard.ts).
  setupFiles: ["test/setup/kill-guard.ts", "test/setup/file-end.ts"],
  // clipanion's ESM build imports a directory ("../platform"), which Node's ESM loader refuses:
  // unit tests of src/cli/ get it through Vite's resolver instead.
  server: { deps: { inline: ["clipanion"] } },
};

export default defineConfig({
  test: {
    // Two test files at a time. Vitest's default is one fewer than the CPUs — one file at a time on
    // CI's 2 cores — while most tests spend their time waiting on the processes they spawn: two
    // files keep both cores busy (vmstat: 0% idle). Three measured the same (1,607 s vs 1,614 s):
    // the suite is CPU-bound, so a third file only adds load to the timing-sensitive tests. Measured
    // again on a later suite, fresh-clone CI runs here: three 1,539 s and 1,599 s (the second with
    // three retried tests and a red run), two 1,595 s.
    maxWorkers: 2,
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
    projects: [
      // The soak runs beside the suite, not after it: its node loop keeps one core busy for minutes,
      // which after the suite left the other idle. Vitest orders files by project name first, so
      // "soak" (before "suite") starts first. `npm run test:soak` runs it alone.
      // Here at 1,000 iterations, a tenth of its long form (`npm run test:soak`): see its header.
      ...(process.platform === "linux" ? [{ test: { ...common, name: "soak", include: [SOAK], testTimeout: 900_000, provide: { soakIterations: 1_000 } } }] : []),
      {
        // A worker process serves file after file: starting one and importing vitest and the helpers
        // anew for each of the ~190 files cost ~0.8 s of CPU per file on CI's 2 cores. The tests
        // share no state through modules: helpers undo what they made per file (test/helpers/file-end.ts).
        test: { ...common, name: "suite", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, SOAK, ...MOCKING], isolate: false },
      },
      { test: { ...common, name: "suite-own-modules", include: MOCKING } },
    ],
  },
});

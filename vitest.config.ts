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
  // What a file's helpers made (temp directories, mounts) is undone after its last test.
  setupFiles: ["test/setup/file-end.ts"],
  // clipanion's ESM build imports a directory ("../platform"), which Node's ESM loader refuses:
  // unit tests of src/cli/ get it through Vite's resolver instead.
  server: { deps: { inline: ["clipanion"] } },
};

export default defineConfig({
  test: {
    // Three test files at a time on CI's 2 cores. Most tests spend their time waiting on the
    // processes they spawn, and some wait on the disk (an install of 100,000 files) or on a timeout
    // (a silent server): with two files, the per-file CPU probe measured 83% of both cores used
    // (2,777 CPU-s in a 1,681 s run). Back-to-back fresh-clone CI runs of one tree: 1,539 s with three
    // against 1,595 s with two, both green with one retried test. (An older suite measured
    // 1,607 s vs 1,614 s.) Vitest's default, one fewer than the CPUs, would be one file at a time.
    maxWorkers: 3,
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
    projects: [
      // The soak runs beside the suite, not after it: its node loop keeps one core busy for minutes,
      // which after the suite left the other idle. Vitest orders files by project name first, so
      // "soak" (before "suite") starts first. `npm run test:soak` runs it alone.
      // Here at 2,000 iterations, a fifth of its long form (`npm run test:soak`): see its header.
      ...(process.platform === "linux" ? [{ test: { ...common, name: "soak", include: [SOAK], testTimeout: 900_000, provide: { soakIterations: 2_000 } } }] : []),
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

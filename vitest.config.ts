import { configDefaults, defineConfig } from "vitest/config";

// Tests spawn the built CLI (dist/) under node and bun; `npm test` builds first.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The 10,000-iteration soak runs separately: npm run test:soak (vitest.soak.config.ts).
    // Tests that need Linux itself (/proc) are tagged where they are defined: helpers.linuxOnly.
    exclude: [...configDefaults.exclude, "test/e2e/run/soak.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two test files at a time. Vitest's default is one fewer than the CPUs — one file at a time on
    // CI's 2 cores — while most tests spend their time waiting on the processes they spawn: two
    // files keep both cores busy (vmstat: 0% idle). Three measured the same (1,607 s vs 1,614 s):
    // the suite is CPU-bound, so a third file only adds load to the timing-sensitive tests.
    maxWorkers: 2,
    // A test that fails is run once more before it counts as failed. The suite starts thousands of
    // real processes on two busy cores, where a wait that holds on a quiet machine can run out
    // once; a real fault fails both times (and the report lists the retry).
    retry: 1,
    // clipanion's ESM build imports a directory ("../platform"), which Node's ESM loader refuses:
    // unit tests of src/cli/ get it through Vite's resolver instead.
    server: { deps: { inline: ["clipanion"] } },
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
  },
});

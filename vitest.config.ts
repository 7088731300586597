import { configDefaults, defineConfig } from "vitest/config";

/**
 * Test files that need Linux itself: they read /proc (process states, memory, file descriptors,
 * process groups) to prove what loopx did. On other hosts (macOS in CI) they are left out and the
 * rest runs; README "Continuous integration" says so.
 */
const LINUX_ONLY = [
  "test/hardening-io.test.ts",
  "test/hardening-process.test.ts",
  "test/run-memory.test.ts",
  "test/run-signals.test.ts",
];

// Tests spawn the built CLI (dist/) under node and bun; `npm test` builds first.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The 10,000-iteration soak runs separately: npm run test:soak (vitest.soak.config.ts).
    exclude: [...configDefaults.exclude, "test/soak.test.ts", ...(process.platform === "linux" ? [] : LINUX_ONLY)],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // clipanion's ESM build imports a directory ("../platform"), which Node's ESM loader refuses:
    // unit tests of src/cli/ get it through Vite's resolver instead.
    server: { deps: { inline: ["clipanion"] } },
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
  },
});

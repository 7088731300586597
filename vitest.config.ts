import { defineConfig } from "vitest/config";

// Tests spawn the built CLI (dist/) under node and bun; `npm test` builds first.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
  },
});

import { defineConfig } from "vitest/config";

// Long-running soak tests (`npm run test:soak`): only test/soak.test.ts, which the default
// vitest.config.ts excludes. Tests spawn the built CLI (dist/); the script builds first.
export default defineConfig({
  test: {
    include: ["test/soak.test.ts"],
    testTimeout: 900_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default", ["json", { outputFile: "test-results/vitest-soak.json" }]],
  },
});

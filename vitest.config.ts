import { configDefaults, defineConfig } from "vitest/config";

// Tests spawn the built CLI (dist/) under node and bun; `npm test` builds first.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The 10,000-iteration soak runs separately: npm run test:soak (vitest.soak.config.ts).
    exclude: [...configDefaults.exclude, "test/soak.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
  },
});

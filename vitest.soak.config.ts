import { defineConfig } from "vitest/config";

// The soak alone (`npm run test:soak`): only test/e2e/run/soak.test.ts, which `npm test` runs as the
// "soak" project beside the rest (vitest.config.ts). Tests spawn the built CLI (dist/); the script builds first.
// The soak samples loopx through /proc, so it runs on Linux only (none on macOS).
const linux = process.platform === "linux";
export default defineConfig({
  test: {
    include: linux ? ["test/e2e/run/soak.test.ts"] : [],
    passWithNoTests: !linux,
    testTimeout: 900_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default", ["json", { outputFile: "test-results/vitest-soak.json" }]],
  },
});

// Prints the one closing line CI reads: "tests: N passed, M failed[, K skipped]", summed over
// vitest's JSON reports (`npm test`'s, and any other given, e.g. a `npm run test:soak` of its own, when
// it ran). A missing first report (the build or install failed before tests ran) is a failure.
import { existsSync, readFileSync } from "node:fs";

const [main = "test-results/vitest.json", ...others] = process.argv.slice(2);
let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of [main, ...others]) {
  if (!existsSync(file)) {
    if (file !== main) continue; // e.g. a separate soak run that did not start
    console.log(`no test report at ${file}: the build or the test run failed before any test finished`);
    failed += 1;
    continue;
  }
  const report = JSON.parse(readFileSync(file, "utf8"));
  passed += report.numPassedTests ?? 0;
  // Suites that failed to load count as failures too, so a broken test file cannot pass silently.
  const brokenSuites = (report.testResults ?? []).filter((s) => s.status === "failed" && (s.assertionResults ?? []).length === 0).length;
  failed += (report.numFailedTests ?? 0) + brokenSuites;
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
}
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(failed > 0 ? 1 : 0);

// Prints the one closing line CI reads: "tests: N passed, M failed[, K skipped]", from vitest's
// JSON report. A missing report (the build or install failed before tests ran) is a failure.
import { readFileSync } from "node:fs";

const file = process.argv[2] ?? "test-results/vitest.json";
let report;
try {
  report = JSON.parse(readFileSync(file, "utf8"));
} catch {
  console.log(`no test report at ${file}: the build or the test run failed before any test finished`);
  console.log("tests: 0 passed, 1 failed");
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
// Suites that failed to load count as failures too, so a broken test file cannot pass silently.
const failedSuites = (report.testResults ?? []).filter((s) => s.status === "failed" && (s.assertionResults ?? []).length === 0).length;
const failed = (report.numFailedTests ?? 0) + failedSuites;
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(failed > 0 ? 1 : 0);

// converge:judge — the independent judge: a separate agent invocation with a fresh context (it
// never sees the worker's conversation). Approves → the loop stops, converged; rejects → back to
// the worker with the judge's findings.
import { runJudge } from "./lib/converge.ts";

await runJudge();

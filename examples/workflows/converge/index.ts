// converge:index — the worker. Runs the worker agent on the task (plus the previous round's
// findings, piped in by the gate or the judge), then hands over to the gate.
import { runWorker } from "./lib/converge.ts";

await runWorker();

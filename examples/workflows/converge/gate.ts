// converge:gate — the deterministic gate: runs CONVERGE_GATE in the project root. Fails → back
// to the worker with the gate's output as findings; passes → on to the judge.
import { runGate } from "./lib/converge.ts";

await runGate();

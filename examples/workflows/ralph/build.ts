// ralph:build — Build mode: the agent implements the most important task of implementation_plan.md.
// One loopx iteration is one Ralph iteration; see lib/ralph.ts and README.md.
import { runRalph } from "./lib/ralph.ts";

await runRalph("build");

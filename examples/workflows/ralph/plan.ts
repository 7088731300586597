// ralph:plan — Plan mode: the agent studies the specs and writes or refreshes implementation_plan.md.
// One loopx iteration is one Ralph iteration; see lib/ralph.ts and README.md.
import { runRalph } from "./lib/ralph.ts";

await runRalph("plan");

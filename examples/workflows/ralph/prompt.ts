// ralph:prompt — Ad-hoc prompt mode: the prompt template is the file named by RALPH_PROMPT_FILE.
// One loopx iteration is one Ralph iteration; see lib/ralph.ts and README.md.
import { runRalph } from "./lib/ralph.ts";

await runRalph("prompt");

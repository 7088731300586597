// Does the work for one task. In a real loop this is where an agent CLI would run with a fresh
// context (e.g. spawn `claude -p` with a prompt built from the task); here it writes a work log.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { input, output } from "loopx";

const task = (await input()).trim();
const root = process.env.LOOPX_PROJECT_ROOT!;
appendFileSync(join(root, "work.log"), `did: ${task}\n`);
console.error(`worker: did "${task}"`);

// Qualified goto: hand over to a script in another workflow, piping the task along.
output({ result: task, goto: "review:check" });

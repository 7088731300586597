// Does the work for one task. In a real loop this is where an agent CLI would run with a fresh
// context (e.g. spawn `claude -p` with a prompt built from the task); here it writes a work log.
// Hand-off files live in $LOOPX_TMPDIR: private to this run, shared by all its scripts, and
// removed by loopx however the run ends (stop, error, Ctrl-C), so nothing leaks into the project.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { input, output } from "loopx";

const task = (await input()).trim();
appendFileSync(join(process.env.LOOPX_TMPDIR!, "work.log"), `did: ${task}\n`);
console.error(`worker: [iteration ${process.env.LOOPX_ITERATION}] did "${task}"`);

// Qualified goto: hand over to a script in another workflow, piping the task along.
output({ result: task, goto: "review:check" });

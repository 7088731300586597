// Runs the example loop in examples/todo-loop with the built CLI, in a scratch copy so the
// example stays pristine: worker:index → (bare goto) worker:do-task → (cross-workflow goto)
// review:check → (no goto: reset) worker:index → … → stop when every task is checked off.
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const project = mkdtempSync(join(tmpdir(), "loopx-demo-"));
cpSync(join(root, "examples", "todo-loop"), project, { recursive: true });
const runtime = process.argv[2] === "bun" ? join(root, "node_modules", ".bin", "bun") : process.execPath;
console.log(`$ loopx run -n 20 worker   (in ${project}, under ${process.argv[2] === "bun" ? "bun" : "node"})`);
const { status } = spawnSync(runtime, [join(root, "dist", "bin.js"), "run", "-n", "20", "worker"], { cwd: project, stdio: "inherit" });
console.log(`\nloopx exited with ${status}; tasks.md is now:\n`);
console.log(readFileSync(join(project, "tasks.md"), "utf8"));
rmSync(project, { recursive: true, force: true });
process.exit(status ?? 1);

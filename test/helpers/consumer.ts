/** The programmatic API from a consumer program: a project importing the built package as `loopx`, and its run. */
import { join } from "node:path";
import { isolatedEnv } from "./env.js";
import { ROOT } from "./paths.js";
import { runCommand } from "./process.js";
import { makeProject, makeSymlink } from "./project.js";
import type { Runtime } from "./runtimes.js";

/** A consumer project: `consumer.mjs` (plus `files`) importing the built package as `loopx`. */
export function consumer(source: string, files: Record<string, string> = {}): string {
  const dir = makeProject({ "consumer.mjs": source, ...files });
  makeSymlink(ROOT, join(dir, "node_modules", "loopx"));
  return dir;
}

/**
 * Runs `consumer.mjs` under `runtime`; `json` is its last stdout line parsed (undefined when it
 * printed nothing; a line that is not JSON throws, with the consumer's output).
 */
export async function runConsumer(runtime: Runtime, dir: string, options: { env?: Record<string, string>; timeoutMs?: number } = {}) {
  const result = await runCommand(runtime.exe, ["consumer.mjs"], { cwd: dir, env: options.env ?? isolatedEnv(), timeoutMs: options.timeoutMs ?? 60_000 });
  const last = result.stdout.trim().split("\n").pop() ?? "";
  let json: any;
  try {
    json = last === "" ? undefined : JSON.parse(last);
  } catch {
    throw new Error(`consumer printed no JSON (code ${result.code}):\n${result.stdout.slice(0, 3000)}\n${result.stderr.slice(0, 3000)}`);
  }
  return { ...result, json };
}

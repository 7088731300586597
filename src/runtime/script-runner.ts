import { existsSync } from "node:fs";
import { delimiter } from "node:path";
import { pathToFileURL } from "node:url";
import type { DiscoveredScript } from "../core/discovery.js";
import { ScriptFailedError } from "../core/errors.js";
import { distPath, isBun } from "./detect.js";
import type { ScriptSupervisor } from "./supervisor.js";

let nodeLoaderUrl: string | undefined;
let bunPreloadPath: string | undefined;

/**
 * The interpreter command line for a script (spec §6.2, §6.3): bash for `.sh`; for JS/TS, Bun
 * itself when loopx runs under Bun, else one Node process with tsx's ESM hooks (and loopx's own)
 * preloaded through `--import` — no tsx CLI wrapper, which would start a second Node.
 */
export function scriptCommand(script: DiscoveredScript): { command: string; args: string[] } {
  if (script.ext === ".sh") return { command: "/bin/bash", args: [script.path] };
  // --no-install: a script's missing package is a resolution error, never a registry download.
  if (isBun) {
    bunPreloadPath ??= distPath("runtime/loader/bun-preload.js");
    return { command: process.execPath, args: ["--no-install", "--preload", bunPreloadPath, script.path] };
  }
  nodeLoaderUrl ??= pathToFileURL(distPath("runtime/loader/register.js")).href;
  return { command: process.execPath, args: ["--import", nodeLoaderUrl, script.path] };
}

const bunNodePathCache = new WeakMap<object, Record<string, string | undefined>>();

/**
 * Under Bun, `import "loopx"` resolves through NODE_PATH (spec §3.3) to dist/node-path/, which holds
 * a two-file `loopx` package re-exporting this one. A workflow's own node_modules/loopx still wins.
 */
function withBunNodePath(env: Record<string, string | undefined>): Record<string, string | undefined> {
  let withPath = bunNodePathCache.get(env);
  if (!withPath) {
    const shim = distPath("node-path");
    withPath = { ...env, NODE_PATH: env.NODE_PATH ? `${shim}${delimiter}${env.NODE_PATH}` : shim };
    bunNodePathCache.set(env, withPath);
  }
  return withPath;
}

/**
 * Runs one script through the supervisor and returns its stdout. A non-zero exit, a death by
 * signal or a failure to start is a ScriptFailedError (spec §7.2); the stdout of a failed script is
 * never parsed.
 */
export async function runScript(
  supervisor: ScriptSupervisor,
  script: DiscoveredScript,
  label: string,
  cwd: string,
  env: Record<string, string | undefined>,
  stdin: string | undefined,
): Promise<string> {
  // Discovery is cached for the whole loop; a file removed since then fails here, clearly.
  if (!existsSync(script.path)) throw new ScriptFailedError(`script ${label} cannot be started: ${script.path} no longer exists`);
  const { command, args } = scriptCommand(script);
  const exit = await supervisor.run({ command, args, cwd, env: isBun && script.ext !== ".sh" ? withBunNodePath(env) : env, stdin });
  if (exit.spawnError) throw new ScriptFailedError(`script ${label} cannot be started: ${exit.spawnError.message}`);
  if (exit.signal) throw new ScriptFailedError(`script ${label} was killed by ${exit.signal}`);
  if (exit.code !== 0) throw new ScriptFailedError(`script ${label} exited with code ${exit.code}`);
  return exit.stdout.toString("utf8");
}

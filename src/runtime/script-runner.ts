import { existsSync, readFileSync } from "node:fs";
import { delimiter } from "node:path";
import { pathToFileURL } from "node:url";
import type { DiscoveredScript } from "../core/discovery.js";
import { ScriptFailedError } from "../core/errors.js";
import { distPath, isBun, isStandalone } from "./detect.js";
import { hooklessFlags } from "./hookless-script.js";
import { helperCache } from "./standalone-cache.js";
import type { ScriptSupervisor } from "./supervisor.js";

type Env = Record<string, string | undefined>;

/** How JS/TS scripts start in this process's runtime; decided once. */
interface JsLauncher {
  command: string;
  args(scriptPath: string): string[];
  /** Variables the runtime needs on top of the script environment (NODE_PATH, BUN_BE_BUN). */
  extraEnv(env: Env): Env;
}

function prependNodePath(env: Env, dir: string): string {
  return env.NODE_PATH ? `${dir}${delimiter}${env.NODE_PATH}` : dir;
}

/**
 * JSX the way tsx compiles it under Node: the classic transform (`React.createElement`,
 * `React.Fragment`), where Bun would default to the automatic runtime and import
 * `react/jsx-dev-runtime`. A flag costs no file read; a workflow's own tsconfig.json `jsx`,
 * `jsxFactory` and `jsxFragmentFactory` still win over it (Bun reads the tsconfig.json of the
 * script's cwd, the workflow directory — as tsx does), and so do `@jsx`/`@jsxRuntime` pragmas.
 */
const BUN_JSX = ["--jsx-runtime", "classic"];

/**
 * Spec §6.3 and §3.3, per runtime:
 * - Node: one Node process with loopx's module hooks preloaded by `--import` (loader/register.ts:
 *   in-thread hooks where Node has them, TypeScript/JSX from loopx's transform cache; without
 *   in-thread hooks, a plain JS script that needs none of them runs as ESM by Node's own flag);
 * - Bun: Bun itself, `import "loopx"` through NODE_PATH to dist/node-path/ (a two-file package
 *   re-exporting this one), and a preload that keeps scripts ESM-only;
 * - standalone binary: the binary acting as Bun (BUN_BE_BUN=1) with the same preload and a helper
 *   package materialized in the per-version cache.
 * `--no-install`: a missing package is a resolution error, never a registry download.
 */
function createJsLauncher(): JsLauncher {
  if (isStandalone) {
    const cache = helperCache();
    return {
      command: process.execPath,
      args: (path) => ["--no-install", ...BUN_JSX, "--preload", cache.preload, path],
      extraEnv: (env) => ({ NODE_PATH: prependNodePath(env, cache.nodePath), BUN_BE_BUN: "1" }),
    };
  }
  if (isBun) {
    const preload = distPath("runtime/loader/bun-preload.js");
    const envOnly = distPath("runtime/loader/bun-script-env.js");
    const nodePath = distPath("node-path");
    return {
      command: process.execPath,
      // The ESM-only guard costs ~3 ms per start; a script that never names require, module or
      // exports has nothing for it to catch, and gets only the few lines that keep loopx's
      // NODE_PATH out of its children (bun-script-env.ts, which the guard imports too).
      args: (path) => ["--no-install", ...BUN_JSX, "--preload", mayUseCommonJs(path) ? preload : envOnly, path],
      extraEnv: (env) => ({ NODE_PATH: prependNodePath(env, nodePath) }),
    };
  }
  const loader = pathToFileURL(distPath("runtime/loader/register.js")).href;
  // On Node without module.registerHooks, a plain JS script that needs nothing from the hooks
  // skips their ~50 ms worker thread (hookless-script.ts).
  return { command: process.execPath, args: (path) => hooklessFlags(path) ?? ["--import", loader, path], extraEnv: () => ({}) };
}

/** True unless the script's source certainly never mentions require, module or exports. */
function mayUseCommonJs(path: string): boolean {
  try {
    return /\b(?:require|module|exports)\b/.test(readFileSync(path, "utf8"));
  } catch {
    return true;
  }
}

let jsLauncher: JsLauncher | undefined;

/** The command line and environment for one script execution. */
export function scriptInvocation(script: DiscoveredScript, env: Env): { command: string; args: string[]; env: Env } {
  if (script.ext === ".sh") return { command: "/bin/bash", args: [script.path], env };
  jsLauncher ??= createJsLauncher();
  // The engine hands over a fresh env object per execution (LOOPX_ITERATION changes every time),
  // so there is nothing to cache here.
  return { command: jsLauncher.command, args: jsLauncher.args(script.path), env: { ...env, ...jsLauncher.extraEnv(env) } };
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
  env: Env,
  stdin: string | undefined,
): Promise<{ stdout: string; stdoutBytes: number }> {
  // Discovery is cached for the whole loop; a file removed since then fails here, clearly.
  if (!existsSync(script.path)) throw new ScriptFailedError(`script ${label} cannot be started: ${script.path} no longer exists`);
  const invocation = scriptInvocation(script, env);
  const exit = await supervisor.run({ ...invocation, cwd, stdin });
  if (exit.spawnError) throw new ScriptFailedError(`script ${label} cannot be started: ${exit.spawnError.message}`);
  const ended = { exitCode: exit.code, signal: exit.signal, stdoutBytes: exit.stdout.length };
  if (exit.signal) throw new ScriptFailedError(`script ${label} was killed by ${exit.signal}`, ended);
  if (exit.code !== 0) throw new ScriptFailedError(`script ${label} exited with code ${exit.code}`, ended);
  return { stdout: exit.stdout.toString("utf8"), stdoutBytes: exit.stdout.length };
}

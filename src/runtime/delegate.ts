import { join } from "node:path";
import { fsReason } from "../core/errors.js";
import { fs, os } from "../os/builtins.js";
import { runtimeName } from "./platform/runtime.js";
import { warnToStderr as warn } from "../os/stderr.js";

const { accessSync, constants, existsSync, readFileSync, realpathSync } = fs;

/** True if `command` is an executable file in one of PATH's directories. */
function onPath(command: string): boolean {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    try {
      accessSync(join(dir || ".", command), constants.X_OK);
      return true;
    } catch {
      // not here
    }
  }
  return false;
}

const isJsEntry = (path: string) => /\.(?:c|m)?js$/.test(path);

const DEPENDENCY_FIELDS = ["dependencies", "devDependencies", "optionalDependencies"] as const;


/**
 * The project-local loopx to delegate to (spec §3.2), or undefined to run this one. The project
 * root is the cwd only — no ancestor search. Each failure mode warns or stays silent as specified.
 */
export function findLocalLoopx(projectRoot: string): string | undefined {
  const manifestPath = join(projectRoot, "package.json");
  let text: string;
  try {
    text = readFileSync(manifestPath, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    warn(`cannot read ${manifestPath}: ${fsReason(error)}; not checking for a project-local loopx version (running this one)`);
    return undefined;
  }
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch (error) {
    const detail = (error instanceof Error ? error.message : String(error)).replace(/\s*[\r\n]+\s*/g, " ");
    warn(`${manifestPath} is invalid JSON (${detail}); not checking for a project-local loopx version (running this one)`);
    return undefined;
  }
  const declared = DEPENDENCY_FIELDS.some((field) => {
    const deps = (manifest as Record<string, unknown> | null)?.[field];
    return typeof deps === "object" && deps !== null && Object.hasOwn(deps, "loopx");
  });
  if (!declared) return undefined;
  const localBin = join(projectRoot, "node_modules", ".bin", "loopx");
  if (!existsSync(localBin)) {
    warn(`${manifestPath} declares loopx as a dependency but ${localBin} does not exist (run npm install?); running this loopx version instead`);
    return undefined;
  }
  // The standalone binary could run a JS loopx by acting as Bun, but that loopx hands its scripts
  // a LOOPX_BIN of its own `dist/bin.js` (`#!/usr/bin/env node`), which fails where there is no
  // Node: a bash script's `$LOOPX_BIN output ...` would exit 127.
  if (runtimeName === "binary" && !onPath("node")) {
    let target = localBin;
    try {
      target = realpathSync(localBin);
    } catch {
      // delegate() reports a link that leads nowhere
    }
    if (isJsEntry(target)) {
      warn(`the project-local loopx ${localBin} needs Node.js and node is not on PATH; running this standalone loopx instead`);
      return undefined;
    }
  }
  return localBin;
}

/**
 * Runs the project-local loopx with the same arguments and stdio, LOOPX_DELEGATED=1 and LOOPX_BIN
 * (its realpath) in its environment, forwards
 * SIGINT/SIGTERM to it, and resolves with the exit code to exit with (its own, or 128+N if it died
 * by signal N). A JS entry runs under the current runtime, so `bun loopx` stays on Bun.
 */
export async function delegate(localBin: string, argv: string[]): Promise<number> {
  const { spawn } = await import("node:child_process"); // only when delegating: keeps start-up lean
  const target = realpathSync(localBin);
  const isScript = isJsEntry(target);
  // A JS loopx runs as it runs itself: under this runtime (`bun loopx` stays on Bun), and from the
  // standalone binary under Node (its shebang; findLocalLoopx checked that node is on PATH), so
  // that it and the LOOPX_BIN it hands its scripts run on one runtime, as the README says.
  const runner = runtimeName === "binary" ? "node" : process.execPath;
  const [command, args] = isScript ? [runner, [target, ...argv]] : [target, argv];
  // Spec §3.2: after delegation, LOOPX_BIN is the realpath of the effective (local) binary.
  const env: NodeJS.ProcessEnv = { ...process.env, LOOPX_DELEGATED: "1", LOOPX_BIN: target };
  const child = spawn(command, args, { stdio: "inherit", env });
  const forward = (signal: NodeJS.Signals) => {
    try {
      child.kill(signal);
    } catch {
      /* already gone */
    }
  };
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  return new Promise<number>((resolve) => {
    child.on("error", (error) => {
      process.stderr.write(`loopx: cannot start the project-local loopx ${target}: ${error.message}\n`);
      resolve(1);
    });
    child.on("close", (code, signal) => {
      resolve(code ?? 128 + (signal ? os().constants.signals[signal] : 0));
    });
  });
}

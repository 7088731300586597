import { nodeCrypto } from "../os/builtins.js";
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { LoopxError } from "../core/errors.js";
import type { SandboxInfo } from "../core/events.js";
import type { RunControls, RunPart } from "../core/run-part.js";
import { distPath, runtimeName } from "../runtime/platform/index.js";
import type { SpawnSpec } from "../runtime/spawn.js";
import { NetworkBridge } from "./bridge.js";
import { bwrapArgs, bwrapVersion, findBwrap, type FenceLayout } from "./bwrap.js";
import { effectivePolicy, policyDigest, policySources, SANDBOX_EXIT_CODE, unsafeEntry, type SandboxPolicy } from "./policy.js";
import { probeFence } from "./probe.js";
import { RELAY_SOURCE } from "./relay.js";
import type { Env } from "../core/env.js";

export { describePolicy } from "./show.js";

/**
 * `loopx run --sandbox` (loopx's own addition), the engine's door to the fence: `prepareSandbox`
 * finds bubblewrap, reads the policy, starts the network's far ends and proves the fence with a
 * probe — before the run's first event; any failure is one line and exit code 4, and no script
 * runs. A prepared fence wraps every script's command line (the supervisor's `wrap`) and, as a
 * part, reports what its proxy refused and takes its far ends down when the run ends.
 */


export interface SandboxRequest {
  projectRoot: string;
  /** The starting workflow (its `sandbox.json` is the workflow's layer). */
  workflow: string | undefined;
  /** `--sandbox-allow` rules. */
  rules: readonly string[];
  env: Env;
}

const refuse = (message: string): LoopxError => new LoopxError(`--sandbox: ${message}; the run did not start`, SANDBOX_EXIT_CODE);

const SETUP_HINT =
  "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces > 0; on Ubuntu 24.04 kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap; in Docker --security-opt seccomp=unconfined), or run without --sandbox";

/** What a fenced script may read besides the policy: loopx itself and the runtime that runs it, when they live where the fence hides. */
function ownReads(dir: string): string[] {
  const reads = [dir, dirname(dirname(process.execPath))];
  if (runtimeName !== "binary") reads.push(dirname(distPath("")));
  return reads.filter((path) => existsSync(path));
}

/** Absolute paths on a command line (file: URLs too) and in NODE_PATH: the directories the command needs to read. */
function commandReads(words: string[], env: Env): string[] {
  const paths: string[] = [];
  for (const word of [...words, ...(env.NODE_PATH ?? "").split(":")]) {
    const path = word.startsWith("file://") ? fileURLToPath(word) : word;
    if (isAbsolute(path) && existsSync(path)) paths.push(dirname(path));
  }
  return paths;
}

/** The directories on PATH, readable where the fence hides them (a tool in /tmp or ~/bin); never one that holds $HOME. */
function pathReads(env: Env): string[] {
  const home = env.HOME || "/";
  return (env.PATH ?? "").split(":").filter((dir) => isAbsolute(dir) && dir !== "/" && !(home === dir || home.startsWith(`${dir.replace(/\/+$/, "")}/`)) && existsSync(dir));
}

export class Sandbox implements RunPart {
  private controls: RunControls | undefined;
  private running: { n: number; script: string } | undefined;
  private readonly relay: string;

  private constructor(
    readonly info: SandboxInfo,
    private readonly bwrap: string,
    private readonly projectRoot: string,
    private readonly policy: SandboxPolicy,
    private readonly dir: string,
    private readonly bridge: NetworkBridge,
  ) {
    this.relay = join(dir, "relay.mjs");
    writeFileSync(this.relay, RELAY_SOURCE);
  }

  /** Sets up and proves the fence; throws one LoopxError (exit code 4) when it cannot or it does not hold. */
  static async prepare(request: SandboxRequest): Promise<Sandbox> {
    if (process.platform !== "linux") throw refuse(`the fence needs Linux with bubblewrap, and this is ${process.platform} (see "Sandbox" in the README); run without --sandbox`);
    const bwrap = findBwrap(request.env);
    if (!bwrap) throw refuse("bubblewrap (bwrap) is not on PATH: install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or run without --sandbox");
    const projectRoot = realpathSync(request.projectRoot);
    const policy = effectivePolicy(policySources(projectRoot, request.workflow, request.rules), projectRoot, request.env);
    const unsafe = unsafeEntry(policy, projectRoot, request.env);
    if (unsafe) throw refuse(unsafe);
    const info: SandboxInfo = { kind: "bwrap", ...optionalVersion(bwrapVersion(bwrap)), policyDigest: policyDigest(policy, projectRoot) };
    sweepStaleDirs();
    const dir = mkdtempSync(join(tmpdir(), `loopx-sandbox-${process.pid}-`));
    let bridge: NetworkBridge | undefined;
    try {
      const sandbox = new Sandbox(info, bwrap, projectRoot, policy, dir, (bridge = await NetworkBridge.start(dir, policy.network, (target) => sandbox.denied(target))));
      await sandbox.prove(request.env);
      return sandbox;
    } catch (error) {
      bridge?.close();
      rmSync(dir, { recursive: true, force: true });
      throw error instanceof LoopxError ? error : refuse(`bubblewrap cannot set up the fence here (${error instanceof Error ? error.message : String(error)}): ${SETUP_HINT}`);
    }
  }

  private async prove(env: Env): Promise<void> {
    const layout = this.layout(env, [], [], this.projectRoot);
    let verdict: string | undefined;
    try {
      verdict = await probeFence(this.bwrap, layout, nodeCrypto().randomBytes(6).toString("hex"));
    } catch (error) {
      throw refuse(`bubblewrap cannot set up the fence here (${error instanceof Error ? error.message : String(error)}): ${SETUP_HINT}`);
    }
    if (verdict === "project") throw refuse(`a probe inside the fence could not write in the project ${this.projectRoot}: check that you can write there`);
    if (verdict !== undefined) throw refuse(`the fence does not hold: a probe inside it could ${verdict}; check the policy with: loopx sandbox show <target>`);
  }

  private layout(env: Env, writable: string[], readable: string[], cwd: string): FenceLayout {
    return { projectRoot: this.projectRoot, policy: this.policy, env, writable, readable: [...ownReads(this.dir), ...pathReads(env), ...readable], cwd };
  }

  /** One script's command line, fenced (the supervisor's `wrap`). */
  readonly wrap = (spec: SpawnSpec): SpawnSpec => {
    const env = spec.env;
    const writable = [env.LOOPX_TMPDIR, env.LOOPX_RUN_RECORD].filter((path): path is string => path !== undefined && path !== "");
    const inner = [spec.command, ...spec.args];
    const forwards = this.bridge.plan.forwards;
    if (forwards.length === 0) return { ...spec, command: this.bwrap, args: [...bwrapArgs(this.layout(env, writable, commandReads(inner, env), spec.cwd)), "--", ...inner] };
    // The relay runs first, by loopx's own runtime (plain JS: no loader hooks to start); the script gets its own environment back.
    const extra: Env = runtimeName === "binary" ? { BUN_BE_BUN: "1" } : {};
    const restore = Object.fromEntries(Object.keys(extra).filter((name) => env[name] !== undefined).map((name) => [name, env[name]]));
    const unset = Object.keys(extra).filter((name) => env[name] === undefined);
    const relay = [process.execPath, this.relay, JSON.stringify({ forwards, env: restore, unset })];
    const relayEnv = { ...env, ...extra, ...this.bridge.proxyEnv() };
    const layout = this.layout(env, writable, commandReads([...relay, ...inner], relayEnv), spec.cwd);
    return { ...spec, command: this.bwrap, args: [...bwrapArgs(layout), "--", ...relay, ...inner], env: relayEnv };
  };

  private denied(target: string): void {
    this.controls?.emit({ type: "sandbox.denied", kind: "connect", target, ...(this.running ? { n: this.running.n, script: this.running.script } : {}) });
    this.controls?.warn(`the sandbox refused a connection to ${target}${this.running ? ` (${this.running.script})` : ""}: not in the policy`);
  }

  begin(controls: RunControls): void {
    this.controls = controls;
  }

  onEvent(event: { type: string; n?: number; target?: string }): void {
    if (event.type === "iteration.start") this.running = { n: event.n!, script: event.target! };
    else if (event.type === "iteration.end") this.running = undefined;
  }

  /** Takes the far ends down; before the scratch directory goes (parts end in reverse order). */
  end(): void {
    this.release();
  }

  /** Also for a run that never began (its fence was proven, then its session failed). */
  release(): void {
    this.bridge.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The fence directories of runs whose loopx died (kill -9: its guardian knows only LOOPX_TMPDIR), removed by the next fenced run. */
function sweepStaleDirs(): void {
  try {
    for (const name of readdirSync(tmpdir())) {
      const pid = Number(/^loopx-sandbox-(\d+)-/.exec(name)?.[1]);
      if (pid > 0 && !processExists(pid)) rmSync(join(tmpdir(), name), { recursive: true, force: true });
    }
  } catch {
    // nothing to sweep, or not ours to remove
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function optionalVersion(version: string | undefined): { version?: string } {
  return version ? { version } : {};
}

/**
 * An in-memory LoopHost for the loop's unit tests: a project tree held in a map, env files in a
 * table, scripts answered by scripted replies. No temp directories, no process.env, no processes.
 */
import { posix } from "node:path";
import { LoopxError } from "../../../src/core/errors.js";
import type { LoopHost, LoopRequest } from "../../../src/core/loop.js";
import type { Output } from "../../../src/core/output.js";
import { newRunId } from "../../../src/core/run-id.js";
import type { RunPart } from "../../../src/core/run-part.js";
import { RunSession, type RunSessionOptions } from "../../../src/core/run-session.js";
import { stdoutOfText, type ScriptInput } from "../../../src/core/stdout-text.js";
import { parseVersionRequirement } from "../../../src/core/version-requirement.js";

export const ROOT = "/project";
export const GLOBAL_ENV = "/config/loopx/env";

/** The project most cases use: two workflows, one without index, one directory without scripts. */
const STANDARD = [
  ".loopx/ralph/index.sh",
  ".loopx/ralph/check-ready.sh",
  ".loopx/ralph/other.ts",
  ".loopx/review-adr/index.sh",
  ".loopx/review-adr/request-feedback.sh",
  ".loopx/review-adr/apply-feedback.ts",
  ".loopx/review-adr/start.js",
  ".loopx/noindex/only.sh",
  ".loopx/docs/README.md",
];

interface Call {
  label: string;
  workflow: string;
  script: string;
  path: string;
  dir: string;
  /** Exactly what the loop passed (undefined = no input). */
  rawStdin: string | undefined;
  /** What the script would read: undefined means empty stdin. */
  stdin: string;
  env: Record<string, string | undefined>;
}
export type Reply = string | ((call: Call, callIndex: number) => string | Promise<string>);

/** A file tree: paths relative to ROOT (or absolute), with contents ("" for a script). */
export class MemoryTree {
  readonly files = new Map<string, string>();
  constructor(files: string[] | Record<string, string> = STANDARD) {
    this.add(files);
  }
  add(files: string[] | Record<string, string>): void {
    for (const [path, text] of Array.isArray(files) ? files.map((f) => [f, ""] as const) : Object.entries(files)) {
      this.files.set(posix.resolve(ROOT, path), text);
    }
  }
  remove(path: string): void {
    this.files.delete(posix.resolve(ROOT, path));
  }
  list(dir: string): Array<{ name: string; kind: "file" | "dir" }> | undefined {
    const entries = new Map<string, "file" | "dir">();
    for (const path of this.files.keys()) {
      if (!path.startsWith(`${dir}/`)) continue;
      const [name, ...rest] = path.slice(dir.length + 1).split("/");
      entries.set(name!, rest.length > 0 ? "dir" : "file");
    }
    return entries.size > 0 ? [...entries].map(([name, kind]) => ({ name, kind })) : undefined;
  }
}

export interface MemoryHostOptions {
  tree?: MemoryTree;
  /** Env files by absolute path: their text, or the LoopxError reading them gives. */
  envFiles?: Record<string, string | LoopxError>;
  version?: string;
}

export function memoryHost(replies: Record<string, Reply | Reply[]>, options: MemoryHostOptions = {}) {
  const tree = options.tree ?? new MemoryTree();
  const envFiles = options.envFiles ?? {};
  const calls: Call[] = [];
  const warnings: string[] = [];
  /** Interleaved record of version checks (first entries) and script runs, to check ordering. */
  const events: string[] = [];
  const perLabel = new Map<string, number>();
  /** A script's input as the text it reads (a result still held as bytes decoded). */
  const textOf = (input: ScriptInput | undefined): string | undefined => (input === undefined || typeof input === "string" ? input : input.text());
  const host: LoopHost = {
    async runScript(step) {
      if (calls.length >= 200) throw new Error("runaway loop in test (200 calls)");
      const call: Call = {
        label: step.label,
        workflow: step.workflow.name,
        script: step.script.name,
        path: step.script.path,
        dir: step.workflow.dir,
        rawStdin: textOf(step.stdin),
        stdin: textOf(step.stdin) ?? "",
        env: { ...step.env },
      };
      calls.push(call);
      events.push(`run:${step.label}`);
      const r = replies[step.label];
      if (r === undefined) throw new Error(`test has no scripted reply for ${step.label}`);
      let reply: Reply;
      if (Array.isArray(r)) {
        const i = perLabel.get(step.label) ?? 0;
        perLabel.set(step.label, i + 1);
        if (i >= r.length) throw new Error(`test ran out of scripted replies for ${step.label}`);
        reply = r[i]!;
      } else {
        reply = r;
      }
      const stdout = typeof reply === "function" ? await reply(call, calls.length - 1) : reply;
      const stdoutBytes = new TextEncoder().encode(stdout).length;
      return { stdout: stdoutOfText(stdout, stdoutBytes), stdoutBytes };
    },
    warn: (message) => void warnings.push(message),
    directories: tree,
    envFiles: {
      globalEnvFile: () => GLOBAL_ENV,
      read(path, label, missingOk) {
        const file = envFiles[path];
        if (file instanceof LoopxError) throw file;
        if (file !== undefined) return file;
        if (missingOk) return undefined;
        throw new LoopxError(`${label} not found: ${path}`);
      },
    },
    versionRequirement(dir) {
      events.push(`enter:${posix.basename(dir)}`);
      const text = tree.files.get(`${dir}/package.json`);
      return text === undefined ? Promise.resolve({ kind: "none" }) : parseVersionRequirement(text);
    },
    version: options.version ?? "1.0.0",
  };
  return { host, tree, calls, warnings, events, entries: () => events.filter((e) => e.startsWith("enter:")).map((e) => e.slice(6)) };
}

export function request(target: unknown, extra: Partial<LoopRequest> = {}): LoopRequest {
  return { target, projectRoot: ROOT, baseEnv: {}, loopxBin: "/x", ...extra };
}

let ids = 0;
/** A session with no processes to terminate, as the engine would build it (parts optional). */
export function session(parts: RunPart[] = [], options: Partial<RunSessionOptions> = {}): RunSession {
  return new RunSession({ id: newRunId(Date.now(), Uint8Array.of(ids++, 7, 7, 7, 7, 7, 7)), pid: 4242, terminate: async () => {}, warn: () => {}, runtime: "node", version: "9.9.9", parts, ...options });
}

export async function collect(gen: AsyncGenerator<Output, void, undefined>): Promise<{ outputs: Output[]; error: unknown }> {
  const outputs: Output[] = [];
  try {
    for await (const o of gen) outputs.push(o);
    return { outputs, error: undefined };
  } catch (error) {
    return { outputs, error };
  }
}

export const J = (o: unknown) => JSON.stringify(o);
export const STOP = J({ stop: true });

import { nodeCrypto } from "../os/builtins.js";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { LoopxError } from "../core/errors.js";

/**
 * The sandbox's policy (loopx's own addition): what a fenced script may write, read inside $HOME,
 * and connect to, beyond what every fenced run gets (its project root, LOOPX_TMPDIR, its record).
 * Three layers, added together: the workflow's (`.loopx/<workflow>/sandbox.json`), the project's
 * (`.loopx/sandbox.json`) and the command line's (`--sandbox-allow`). A layer only adds: nothing
 * a layer says can take a default denial back except by naming the path to read or write.
 */

const POLICY_FILE = "sandbox.json";

/** One layer as its file says it, paths as written. */
interface PolicyLayer {
  write?: string[];
  read?: string[];
  network?: string[];
}

/** Where a layer came from, for `loopx sandbox show` and messages. */
export interface PolicySource {
  name: "workflow" | "project" | "command line";
  file?: string;
  layer: PolicyLayer;
}

/** The effective policy: absolute paths, `host:port` entries; sorted and unique. */
export interface SandboxPolicy {
  write: string[];
  read: string[];
  network: string[];
}

/** Secrets in $HOME a fenced script never reads (all of $HOME is hidden; these stay hidden even when a layer names a parent). */
export const DENIED_READS = [".ssh", ".aws", ".config/gh", ".gnupg", ".netrc", ".git-credentials", ".docker", ".kube", ".npmrc", ".pypirc", ".config/gcloud", ".azure", ".password-store", ".local/share/keyrings"];

/** What of $HOME stays readable by default: toolchains and git's own settings. */
export const DEFAULT_READS = [".gitconfig", ".config/git", ".nvm", ".bun", ".volta", ".local/bin", ".cargo/bin", ".rustup", ".deno", ".asdf", ".pyenv", "go/bin"];

function home(env: Record<string, string | undefined>): string {
  return env.HOME || homedir();
}

/** `~` and `~/x` are the user's home; relative paths resolve against the project root. */
function expandPath(path: string, projectRoot: string, env: Record<string, string | undefined>): string {
  if (path === "~") return home(env);
  if (path.startsWith("~/")) return join(home(env), path.slice(2));
  return isAbsolute(path) ? resolve(path) : resolve(projectRoot, path);
}

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/;

/** "host:port" checked: a host name or address, a port 1–65535; the one-line reason otherwise. */
function checkNetworkEntry(entry: string): string | undefined {
  const match = HOST_PORT.exec(entry);
  if (!match) return `"${entry}" is not host:port (e.g. api.anthropic.com:443, 127.0.0.1:8080)`;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return `"${entry}" has no valid port (1 to 65535)`;
  return undefined;
}

function stringList(value: unknown, where: string, field: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((item) => typeof item !== "string" || item === "" || item.includes("\0"))) {
    throw new LoopxError(`${where}: "${field}" must be a list of non-empty strings`, SANDBOX_EXIT_CODE);
  }
  return value as string[];
}

/** A policy file read and checked (undefined when there is none); a bad one is one line naming it. */
function readPolicyFile(file: string): PolicyLayer | undefined {
  if (!existsSync(file)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new LoopxError(`sandbox policy ${file} is not valid JSON (${error instanceof Error ? error.message : String(error)})`, SANDBOX_EXIT_CODE);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new LoopxError(`sandbox policy ${file} must be a JSON object with "write", "read" and "network" lists`, SANDBOX_EXIT_CODE);
  const unknown = Object.keys(parsed).filter((key) => !["write", "read", "network", "$comment"].includes(key));
  if (unknown.length > 0) throw new LoopxError(`sandbox policy ${file} has unknown field "${unknown[0]}" (known: write, read, network)`, SANDBOX_EXIT_CODE);
  const object = parsed as Record<string, unknown>;
  const layer: PolicyLayer = {};
  const write = stringList(object.write, `sandbox policy ${file}`, "write");
  const read = stringList(object.read, `sandbox policy ${file}`, "read");
  const network = stringList(object.network, `sandbox policy ${file}`, "network");
  for (const entry of network ?? []) {
    const problem = checkNetworkEntry(entry);
    if (problem) throw new LoopxError(`sandbox policy ${file}: network ${problem}`, SANDBOX_EXIT_CODE);
  }
  if (write) layer.write = write;
  if (read) layer.read = read;
  if (network) layer.network = network;
  return layer;
}

/** `--sandbox-allow` rules as a layer: host:port is a connection, anything else a path to write. */
function commandLineLayer(rules: readonly string[]): PolicyLayer {
  const layer: Required<PolicyLayer> = { write: [], read: [], network: [] };
  for (const rule of rules) {
    if (HOST_PORT.test(rule)) layer.network.push(rule);
    else layer.write.push(rule);
  }
  return layer;
}

/** The layers of a run of `workflow` in `projectRoot`, with what the command line adds. */
export function policySources(projectRoot: string, workflow: string | undefined, rules: readonly string[]): PolicySource[] {
  const sources: PolicySource[] = [];
  if (workflow) {
    const file = join(projectRoot, ".loopx", workflow, POLICY_FILE);
    const layer = readPolicyFile(file);
    if (layer) sources.push({ name: "workflow", file, layer });
  }
  const projectFile = join(projectRoot, ".loopx", POLICY_FILE);
  const project = readPolicyFile(projectFile);
  if (project) sources.push({ name: "project", file: projectFile, layer: project });
  if (rules.length > 0) sources.push({ name: "command line", layer: commandLineLayer(rules) });
  return sources;
}

const unique = (items: string[]): string[] => [...new Set(items)].sort();

/** The layers added together, paths made absolute. */
export function effectivePolicy(sources: PolicySource[], projectRoot: string, env: Record<string, string | undefined>): SandboxPolicy {
  const paths = (pick: (layer: PolicyLayer) => string[] | undefined) => unique(sources.flatMap((source) => (pick(source.layer) ?? []).map((path) => expandPath(path, projectRoot, env))));
  return {
    write: paths((layer) => layer.write),
    read: paths((layer) => layer.read),
    network: unique(sources.flatMap((source) => source.layer.network ?? [])),
  };
}

/** sha256 of the effective policy (and the fenced root), its first 16 hex digits: what `run.start` records. */
export function policyDigest(policy: SandboxPolicy, projectRoot: string): string {
  return nodeCrypto().createHash("sha256").update(JSON.stringify({ projectRoot, ...policy })).digest("hex").slice(0, 16);
}

/** loopx's exit code for a run the sandbox refused to start (it cannot be set up, or a probe got through). */
export const SANDBOX_EXIT_CODE = 4;

const within = (path: string, dir: string): boolean => path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);

/**
 * A policy that leaves what the fence is for open: $HOME (or `/`) writable or readable as a whole,
 * or a denied secret named. One line naming the entry and its source, or undefined.
 */
export function unsafeEntry(policy: SandboxPolicy, projectRoot: string, env: Record<string, string | undefined>): string | undefined {
  const userHome = home(env);
  for (const [kind, list] of [["write", policy.write], ["read", policy.read]] as const) {
    for (const path of list) {
      if (within(userHome, path)) return `the policy makes ${path} ${kind === "write" ? "writable" : "readable"}, which holds your home directory ${userHome}: name the directories the workflow needs instead`;
    }
  }
  if (within(userHome, projectRoot)) return `the project root ${projectRoot} holds your home directory ${userHome}: run from a project directory`;
  return undefined;
}

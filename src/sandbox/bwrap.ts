import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { DEFAULT_READS, DENIED_READS, type SandboxPolicy } from "./policy.js";
import type { Env } from "../core/env.js";

/**
 * The fence on Linux: bubblewrap (bwrap), given one command line per script. The whole file system
 * is bound read-only; /tmp and /run are private and empty (a fenced script's /tmp is its own and
 * goes with it; /run holds the daemons' sockets, docker's among them); $HOME is an empty read-only
 * directory with only the toolchains, git's settings and the policy's paths bound back; the
 * project root, LOOPX_TMPDIR, the run's record and the policy's write paths are writable. New user,
 * IPC, UTS, cgroup and network namespaces: the network has only its own loopback, on which the
 * allowed ports are relayed (bridge.ts). Not a new PID namespace and not a new session: the script
 * stays in the process group loopx signals, and its strays are found as without the fence.
 */


/** bwrap on PATH, or undefined. */
export function findBwrap(env: Env): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, "bwrap");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** "0.8.0" from `bwrap --version`, or undefined when it does not answer. */
export function bwrapVersion(bwrap: string): string | undefined {
  const result = spawnSync(bwrap, ["--version"], { encoding: "utf8", timeout: 5000 });
  return /bubblewrap\s+(\S+)/.exec(result.stdout ?? "")?.[1];
}

/** What one fenced command may touch besides the policy. */
export interface FenceLayout {
  projectRoot: string;
  policy: SandboxPolicy;
  env: Env;
  /** Writable for this command: LOOPX_TMPDIR, the run's record. */
  writable: string[];
  /** Readable for this command: loopx itself, the runtime, the sandbox's relay and sockets. */
  readable: string[];
  cwd: string;
}

const within = (path: string, dir: string): boolean => path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);

/** The user's home as the fence hides it: undefined when there is none to hide (HOME=/nonexistent). */
export function hiddenHome(env: Env): string | undefined {
  const home = env.HOME || homedir();
  return home !== "/" && existsSync(home) ? home : undefined;
}

/** The bwrap arguments (before `--`) that fence one command. */
export function bwrapArgs(layout: FenceLayout): string[] {
  const home = hiddenHome(layout.env);
  const args = ["--die-with-parent", "--unshare-user", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--unshare-net"];
  args.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run");
  if (home) args.push("--tmpfs", home);
  const reads = [...(home ? DEFAULT_READS.map((entry) => join(home, entry)) : []), ...layout.policy.read, ...layout.readable];
  for (const path of reads) args.push("--ro-bind-try", path, path);
  for (const path of [layout.projectRoot, ...layout.writable, ...layout.policy.write]) args.push("--bind-try", path, path);
  // The secrets stay hidden under whatever was bound back above them.
  if (home) {
    const bound = [...reads, layout.projectRoot, ...layout.writable, ...layout.policy.write];
    for (const entry of DENIED_READS) {
      const secret = join(home, entry);
      if (!existsSync(secret) || !bound.some((path) => within(secret, path) && path !== secret)) continue;
      if (statSync(secret).isDirectory()) args.push("--tmpfs", secret);
      else args.push("--ro-bind", "/dev/null", secret);
    }
    args.push("--remount-ro", home);
  }
  args.push("--chdir", layout.cwd);
  return args;
}

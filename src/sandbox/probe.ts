import { spawn } from "node:child_process";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { bwrapArgs, hiddenHome, type FenceLayout } from "./bwrap.js";
import { DEFAULT_READS, DENIED_READS } from "./policy.js";

/**
 * The proof, before the first script: a shell inside the very fence the scripts get must write in
 * the project, and must fail to write $HOME and `/`, to see the secrets (and the other entries of
 * $HOME the policy does not name) and to connect to a port of the host's loopback that is not
 * allowed (loopx listens on one for the probe). Anything else and the run does not start.
 */

const PROBE = `
set -u
f="$LOOPX_PROBE_PROJECT/.loopx-sandbox-probe-$LOOPX_PROBE_ID"
if ! ( : > "$f" ) 2>/dev/null; then echo "project"; exit 0; fi
rm -f "$f"
for d in $LOOPX_PROBE_OUTSIDE; do
  if ( : > "$d/.loopx-sandbox-probe-$LOOPX_PROBE_ID" ) 2>/dev/null; then echo "write $d"; exit 0; fi
done
while IFS= read -r p; do
  [ -n "$p" ] && [ -e "$p" ] && { echo "read $p"; exit 0; }
done <<EOF
$LOOPX_PROBE_DENIED
EOF
if ( exec 3<>"/dev/tcp/127.0.0.1/$LOOPX_PROBE_PORT" ) 2>/dev/null; then echo "connect 127.0.0.1:$LOOPX_PROBE_PORT"; exit 0; fi
echo fenced
`;

/** Paths the probe must not see: the secrets that exist, and a few other entries of $HOME not allowed. */
function deniedSamples(layout: FenceLayout): string[] {
  const home = hiddenHome(layout.env);
  if (!home) return [];
  const allowed = [...DEFAULT_READS.map((entry) => join(home, entry)), ...layout.policy.read, ...layout.policy.write, layout.projectRoot, ...layout.readable, ...layout.writable];
  const covered = (path: string) => allowed.some((dir) => path === dir || path.startsWith(`${dir}/`) || dir.startsWith(`${path}/`));
  const secrets = DENIED_READS.map((entry) => join(home, entry)).filter((path) => existsSync(path) && !layout.policy.read.includes(path));
  let others: string[] = [];
  try {
    others = readdirSync(home).map((name) => join(home, name)).filter((path) => !covered(path)).slice(0, 5);
  } catch {
    // an unreadable home: nothing more to sample
  }
  return [...secrets, ...others];
}

function listenAnywhere(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

/**
 * Runs the probe; resolves with what got through ("write /root", "read /root/.ssh", "connect
 * 127.0.0.1:40123", "project" when the project cannot be written), or undefined when the fence
 * holds. Rejects with bwrap's own words when the fence cannot be set up at all.
 */
export async function probeFence(bwrap: string, layout: FenceLayout, id: string): Promise<string | undefined> {
  const listener = await listenAnywhere();
  const port = (listener.address() as { port: number }).port;
  const outside = [hiddenHome(layout.env), "/"].filter((dir): dir is string => dir !== undefined);
  try {
    const env = {
      PATH: "/usr/local/bin:/usr/bin:/bin",
      HOME: layout.env.HOME ?? "/",
      LOOPX_PROBE_PROJECT: layout.projectRoot,
      LOOPX_PROBE_ID: id,
      LOOPX_PROBE_OUTSIDE: outside.join(" "),
      LOOPX_PROBE_DENIED: deniedSamples(layout).join("\n"),
      LOOPX_PROBE_PORT: String(port),
    };
    const { stdout, stderr, code } = await run(bwrap, [...bwrapArgs(layout), "--", "/bin/bash", "-c", PROBE], env);
    if (code !== 0 || !/^(fenced|project|write .*|read .*|connect .*)$/m.test(stdout)) {
      throw new Error(stderr.trim().split("\n").pop() || `bwrap exited with code ${code}`);
    }
    const verdict = stdout.trim().split("\n").pop()!;
    return verdict === "fenced" ? undefined : verdict;
  } finally {
    listener.close();
    for (const dir of outside) {
      const left = join(dir, `.loopx-sandbox-probe-${id}`);
      if (existsSync(left)) rmSync(left, { force: true });
    }
  }
}

function run(command: string, args: string[], env: Record<string, string>): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ stdout, stderr: error.message, code: null });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code });
    });
  });
}

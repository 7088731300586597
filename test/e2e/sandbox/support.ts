/**
 * What the `--sandbox` tests share: a planted home (a secret in ~/.ssh), another project to try to
 * write, two stand-ins on 127.0.0.1 (one the policy allows, one it does not), and the run's record.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { BUN, NODE, isolatedEnv, makeProject, sh, tempDir } from "../../helpers.js";

export const SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- planted by the test";

/** A TCP stand-in on an ephemeral port of 127.0.0.1 that greets every connection with `pong`. */
export function standIn(): Promise<{ port: number; close(): void }> {
  return new Promise((resolve, reject) => {
    const server: Server = createServer((socket) => {
      socket.on("error", () => {});
      socket.end("pong");
    });
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve({ port: (server.address() as { port: number }).port, close: () => server.close() }));
  });
}

/** An isolated environment whose HOME holds a planted ~/.ssh/id_ed25519. */
export function plantedEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = isolatedEnv(extra);
  mkdirSync(join(env.HOME!, ".ssh"), { recursive: true });
  writeFileSync(join(env.HOME!, ".ssh", "id_ed25519"), SECRET);
  return env;
}

/** A PATH with node and bun (and so loopx) but no bwrap: a directory of links to the two runtimes. */
export function pathWithoutBwrap(): string {
  const dir = tempDir("loopx-nobwrap-");
  symlinkSync(NODE, join(dir, "node"));
  symlinkSync(BUN, join(dir, "bun"));
  return dir;
}

/**
 * The fenced workflow `w`: index.sh tries every way out (each escape appends to escaped.txt in the
 * project), reaches the allowed stand-in, asks the proxy for a host that is not allowed, starts a
 * `setsid` child that tries the same, notes itself in the record, then goes to js.ts, which
 * imports loopx's helpers and stops.
 */
export function fencedProject(policy: object): string {
  return makeProject({
    ".loopx/sandbox.json": JSON.stringify(policy),
    ".loopx/w/index.sh": sh(`cd "$LOOPX_PROJECT_ROOT"
echo inside > written.txt
touch "$HOME/outside" 2>/dev/null && echo home >> escaped.txt
touch "$OTHER_PROJECT/planted" 2>/dev/null && echo other-project >> escaped.txt
cat "$HOME/.ssh/id_ed25519" >> escaped.txt 2>/dev/null
( exec 3<>"/dev/tcp/127.0.0.1/$DENIED_PORT" ) 2>/dev/null && echo denied-port >> escaped.txt
exec 3<>"/dev/tcp/127.0.0.1/$ALLOWED_PORT" && head -c 4 <&3 > allowed.txt
exec 3<&-
setsid bash -c 'touch "$HOME/setsid-outside" 2>/dev/null && echo setsid-home >> escaped.txt
( exec 3<>"/dev/tcp/127.0.0.1/$DENIED_PORT" ) 2>/dev/null && echo setsid-port >> escaped.txt
cat "$HOME/.ssh/id_ed25519" >> escaped.txt 2>/dev/null
echo done > setsid.txt' </dev/null >/dev/null 2>&1 &
while [ ! -s setsid.txt ]; do sleep 0.05; done
curl -s -o /dev/null -w '%{http_connect}' https://not-allowed.example/ > proxy.txt 2>/dev/null
"$LOOPX_BIN" note "fenced note"
"$LOOPX_BIN" output --goto js`),
    ".loopx/w/js.ts": `import { output } from "loopx";
import { writeFileSync } from "node:fs";
writeFileSync(process.env.LOOPX_PROJECT_ROOT + "/js.txt", "js ran");
output({ stop: true });
`,
  });
}

/** Every event of every run recorded under `env`, in order. */
export function recordEvents(env: Record<string, string>): Array<Record<string, any>> {
  const dir = join(env.XDG_STATE_HOME!, "loopx", "runs");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .flatMap((name) => readFileSync(join(dir, name), "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line)));
}

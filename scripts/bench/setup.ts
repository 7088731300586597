import { existsSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

// ---------------------------------------------------------------------------------------------
// Options

const argv = process.argv.slice(2);
export function flagValue(name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}
if (argv.includes("-h") || argv.includes("--help")) {
  console.log(
    "usage: node --import tsx/esm scripts/bench.ts [--quick] [--rounds N] [--channels node,bun,binary] [--only loop,startup,scripts,ping,rss,idle-rss,install-size,huge-stdout,records,receipts,control,telemetry,runs-show,strays,guardian,worktree,stall,dashboard,sandbox,node-versions] [--binary <path>] [--before <checkout>] [--json <file>] [--keep]\n" +
      "       (npm run bench -- <options> builds dist/ first)",
  );
  process.exit(0);
}
export const QUICK = argv.includes("--quick");
export const KEEP = argv.includes("--keep");
export const ROUNDS = Number(flagValue("--rounds") ?? (QUICK ? 3 : 5));
export const CHANNEL_FILTER = new Set((flagValue("--channels") ?? "node,bun,binary").split(","));
export const JSON_OUT = flagValue("--json");
/** Target wall time of one measurement (one loopx run or one raw driver run). */
export const BUDGET_MS = QUICK ? 250 : 450;
export const MIN_N = QUICK ? 2 : 3;
export const MAX_N = 400;
export const RSS_ITERATIONS = QUICK ? 1000 : 10_000;
export const RSS_FIRST = 100;
export const STARTUP_RUNS = QUICK ? 5 : 11;
export const PING_ROUNDS = QUICK ? 2 : 3;
export const PAYLOAD_BYTES = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Paths

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const DIST_BIN = join(ROOT, "dist", "bin.js");
export const NODE = process.execPath;
export const BUN = realpathSync(join(ROOT, "node_modules", ".bin", "bun"));
export const BINARY = flagValue("--binary") ?? join(ROOT, "dist", "bin", `loopx-${process.platform}-${process.arch === "arm64" ? "arm64" : "x64"}`);
export const TSX_ESM_URL = pathToFileURL(join(ROOT, "node_modules", "tsx", "dist", "esm", "index.mjs")).href;

if (!existsSync(DIST_BIN)) {
  console.error(`bench: ${DIST_BIN} is missing: build first (npm run build), or use npm run bench, which builds`);
  process.exit(1);
}

// ---------------------------------------------------------------------------------------------
// The benchmark project

export const KINDS = ["sh", "js", "ts", "tsx"] as const;
export type Kind = (typeof KINDS)[number];
export const KIND_LABEL: Record<Kind, string> = { sh: "bash", js: "JS", ts: "TS", tsx: "TSX" };

export const WORK = realpathSync(mkdtempSync(join(tmpdir(), "loopx-bench-")));
export const PROJECT = join(WORK, "project");
const HOME = join(WORK, "home");
export const PROBE_OUT = join(WORK, "probe");
export const DRIVER = join(WORK, "driver.mjs");
export const EMPTY_JS = join(WORK, "empty.mjs");

const TSX_SOURCE = `/** @jsxRuntime classic */
/** @jsx h */
const h = (tag: unknown, props: unknown, ...children: unknown[]): unknown => ({ tag, props, children });
const element: unknown = <div id="noop" />;
void element;
export {};
`;
/** No-op scripts: empty stdout, so the loop resets to the same script each iteration. */
const NOOP: Record<Kind, string> = {
  sh: "#!/bin/bash\n",
  js: "// no-op\n",
  ts: "const noop: number = 0;\nvoid noop;\nexport {};\n",
  tsx: TSX_SOURCE,
};
/** NOOP's TS and JS scripts plus `import { output, input } from "loopx"`, by workflow name. */
const IMPORTING: Record<string, { name: string; source: string }> = {
  tsi: { name: "index.ts", source: `import { input, output } from "loopx";\n${NOOP.ts.replace("export {};\n", "")}void input;\nvoid output;\n` },
  jsi: { name: "index.js", source: `import { input, output } from "loopx";\n${NOOP.js}void input;\nvoid output;\n` },
};
// readFileSync, not copyFileSync: copy_file_range copies nothing from procfs files.
const PROBE_JS = `import { readFileSync, writeFileSync } from "node:fs";
const out = process.env.BENCH_PROBE_OUT + "/" + process.env.BENCH_PROBE_KIND;
writeFileSync(out + ".cmdline", readFileSync("/proc/self/cmdline"));
writeFileSync(out + ".environ", readFileSync("/proc/self/environ"));
writeFileSync(out + ".ppid", String(process.ppid));
`;
const PROBE: Record<Kind, string> = {
  sh: `#!/bin/bash\nout="$BENCH_PROBE_OUT/$BENCH_PROBE_KIND"\ncp /proc/$$/cmdline "$out.cmdline"\ncp /proc/$$/environ "$out.environ"\necho "$PPID" > "$out.ppid"\n`,
  js: PROBE_JS,
  ts: `${PROBE_JS}const typed: string = "ts";\nvoid typed;\n`,
  tsx: `${PROBE_JS}${TSX_SOURCE.replace("export {};\n", "")}`,
};

export function scriptPath(workflow: string, kind: Kind): string {
  return join(PROJECT, ".loopx", workflow, `${workflow === "probe" ? kind : "index"}.${kind}`);
}

/**
 * The 1 MB ping-pong: `index` starts it with the payload; then `ping` gotos `pong` and `pong` gotos
 * `ping`, each re-emitting the result it received on stdin. The scripts stream it (`cat`) instead
 * of holding it in a bash variable, so bash's own string handling (tens of ms for 1 MB) does not
 * drown what loopx adds; the `check` workflow verifies once that the result arrives intact. (Not
 * `/dev/stdin`: under Node, loopx's stdin pipe is a socketpair, which cannot be opened (ENXIO).)
 */
function pingScripts(bytes: number, check: boolean): Record<string, string> {
  const forward = (next: string) => `#!/bin/bash\nprintf '{"goto":"${next}","result":"'\ncat\nprintf '"}\\n'\n`;
  const scripts: Record<string, string> = {
    "index.sh": `#!/bin/bash\nprintf '{"goto":"ping","result":"'\ncat ../../payload-${bytes}\nprintf '"}\\n'\n`,
    "ping.sh": forward("pong"),
    "pong.sh": forward(check ? "check" : "ping"),
  };
  if (check) {
    scripts["check.sh"] =
      `#!/bin/bash\nLC_ALL=C\ndata=$(cat)\nif [ "\${#data}" -ne ${bytes} ] || [ "$data" != "$(<../../payload-${bytes})" ]; then\n` +
      `  echo "ping-pong: result of \${#data} bytes does not match the ${bytes}-byte payload" >&2; exit 1\nfi\necho '{"stop":true}'\n`;
  }
  return scripts;
}

/** State files of the RSS loop of one channel (the channels' loops run concurrently). */
export function rssFile(channel: string, name: string): string {
  return join(PROJECT, `rss-${channel}-${name}`);
}

/** Counts iterations with bash builtins; at the sample points it waits for the harness to read /proc. */
function rssScript(channel: string, samples: number[]): string {
  const file = (name: string) => `../../rss-${channel}-${name}`;
  const pause = samples
    .map((n) => `if [ "$n" -eq ${n} ]; then : > ${file(`at-${n}`)}; while [ ! -e ${file(`release-${n}`)} ]; do sleep 0.01; done; fi\n`)
    .join("");
  return `#!/bin/bash\nn=0\n[ -f ${file("counter")} ] && read -r n < ${file("counter")}\nn=$((n + 1))\necho "$n" > ${file("counter")}\n${pause}`;
}

const DRIVER_SOURCE = `// The raw loop: starts one command N times, one after the other, wired like loopx wires scripts.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const input = spec.stdinFile ? readFileSync(spec.stdinFile, "utf8") : undefined;
const isBun = typeof globalThis.Bun !== "undefined";
/** CPU time of this process and its reaped children (the started commands), in ms. */
function cpuMs() {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
  return ((+fields[11]) + (+fields[12]) + (+fields[13]) + (+fields[14])) * 1000 / spec.ticksPerSecond;
}
function fail(message) {
  process.stderr.write("driver: " + message + "\\n");
  process.exit(1);
}
function once() {
  if (isBun) {
    const proc = Bun.spawn({
      cmd: [spec.cmd, ...spec.args], cwd: spec.cwd, env: spec.env, detached: true,
      stdin: input === undefined ? "ignore" : Buffer.from(input), stdout: "pipe", stderr: "inherit",
    });
    return Promise.all([new Response(proc.stdout).arrayBuffer(), proc.exited]).then(([out]) => {
      if (proc.exitCode !== 0) fail(spec.cmd + " exited with " + (proc.exitCode ?? proc.signalCode));
      return out.byteLength;
    });
  }
  return new Promise((resolve) => {
    const child = spawn(spec.cmd, spec.args, {
      cwd: spec.cwd, env: spec.env, detached: true, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "inherit"],
    });
    const chunks = [];
    child.stdout.on("data", (chunk) => chunks.push(chunk));
    child.on("error", (error) => fail(error.message));
    child.on("close", (code, signal) => {
      if (code !== 0) fail(spec.cmd + " exited with " + (code ?? signal));
      resolve(Buffer.concat(chunks).length);
    });
    if (input !== undefined) {
      child.stdin.on("error", () => {});
      child.stdin.end(input);
    }
  });
}
for (let i = 0; i < spec.warmup; i++) await once();
const cpuStart = cpuMs();
const start = performance.now();
for (let i = 0; i < spec.n; i++) await once();
const ms = performance.now() - start;
process.stdout.write(JSON.stringify({ ms, cpuMs: cpuMs() - cpuStart, n: spec.n }) + "\\n");
`;

function writeFile(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content, { mode: path.endsWith(".sh") ? 0o755 : 0o644 });
}

export function createProject(): void {
  const moduleJson = '{ "type": "module" }\n';
  for (const kind of KINDS) {
    writeFile(scriptPath(kind, kind), NOOP[kind]);
    writeFile(scriptPath("probe", kind), PROBE[kind]);
    // `node --import tsx/esm x.ts` (the raw Node command) needs "type": "module" to treat .ts as
    // ESM; loopx forces ESM itself, so this only makes the raw command work on the same file.
    if (kind !== "sh") writeFile(join(PROJECT, ".loopx", kind, "package.json"), moduleJson);
  }
  writeFile(join(PROJECT, ".loopx", "probe", "package.json"), moduleJson);
  // The no-op TS and JS scripts with the import almost every real script has (measures/scripts.ts).
  for (const [workflow, file] of Object.entries(IMPORTING)) {
    writeFile(join(PROJECT, ".loopx", workflow, file.name), file.source);
    writeFile(join(PROJECT, ".loopx", workflow, "package.json"), moduleJson);
  }
  for (const bytes of [PAYLOAD_BYTES, 1]) {
    writeFile(join(PROJECT, `payload-${bytes}`), "x".repeat(bytes));
    for (const check of [false, true]) {
      const workflow = `${check ? "check" : "ping"}${bytes === 1 ? "1b" : "1m"}`;
      for (const [name, source] of Object.entries(pingScripts(bytes, check))) writeFile(join(PROJECT, ".loopx", workflow, name), source);
    }
  }
  for (const channel of ["node", "bun", "binary"]) {
    writeFile(join(PROJECT, ".loopx", `rss-${channel}`, "index.sh"), rssScript(channel, [RSS_FIRST, RSS_ITERATIONS]));
  }
  writeFile(DRIVER, DRIVER_SOURCE);
  writeFile(EMPTY_JS, "");
  mkdirSync(PROBE_OUT, { recursive: true });
  mkdirSync(join(HOME, ".config"), { recursive: true });
}

/** A clean environment, the same for loopx and for the raw loops (no npm_* noise, no LOOPX_*). */
export const BASE_ENV: Record<string, string> = {
  PATH: `${dirname(NODE)}:/usr/local/bin:/usr/bin:/bin`,
  HOME,
  XDG_CONFIG_HOME: join(HOME, ".config"),
  LANG: "C.UTF-8",
  ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
};

/** A scratch work directory holding a project whose one workflow `noop` has an empty bash script. */
export function noopBashProject(prefix: string): { work: string; project: string } {
  const work = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const project = join(work, "project");
  const script = join(project, ".loopx", "noop", "index.sh");
  mkdirSync(dirname(script), { recursive: true });
  writeFileSync(script, "#!/bin/bash\n", { mode: 0o755 });
  return { work, project };
}

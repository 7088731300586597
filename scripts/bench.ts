/**
 * loopx loop-overhead benchmark: `npm run bench` (builds dist/ first), or, with dist/ already
 * built, `node --import tsx/esm scripts/bench.ts [--quick] [--rounds N] [--channels node,bun,binary]
 * [--binary <path>] [--json <file>] [--keep]`.
 *
 * The only unavoidable cost of a loop iteration is starting the script's interpreter. For no-op
 * scripts of each kind (bash, JS, TS, TSX) and for each channel loopx can run in (`node dist/bin.js`,
 * `bun dist/bin.js`, the standalone binary dist/bin/loopx-linux-x64 when it has been built), this
 * measures milliseconds per iteration of `loopx run -n N` against the "raw" physical limit: a
 * minimal driver, on the same runtime as the channel, that starts the same interpreter on the same
 * script in a tight loop with the same wiring loopx uses (new process group; stdin /dev/null,
 * stdout piped and read to the end, stderr inherited — a pipe to this harness for both).
 *
 *   raw (the issue's definition)            raw' (loopx's exact command)
 *   bash     /bin/bash script.sh            as loopx runs it, probed from /proc/<script>/cmdline
 *   node     node --import tsx/esm script   and /proc/<script>/environ on a probe run: preloads,
 *   bun      bun script                     flags and environment (NODE_PATH, LOOPX_*) included
 *   binary   <binary> script (BUN_BE_BUN=1)
 *
 * loopx and raw are measured alternately in rounds and medians are reported (this machine is
 * noisy). loopx ms/iter = (wall time of `run -n N` - median wall time of `run -n 0`) / N.
 *
 * CPU time (user + system of every process involved, from rusage of reaped children) is reported
 * next to wall time: it is far less sensitive to other load on the machine.
 *
 * Run records (scripts/bench/records.ts): the bash loop under bun with records on vs off, and the
 * record part's own cost per iteration.
 *
 * Also measured: start-up of `loopx version` / `loopx output` per channel; what
 * `import { output } from "loopx"` adds to a TS script; loopx's RSS and open fds (from
 * /proc/<pid>) at bash iteration 100 and 10,000 (the channels' long loops run concurrently);
 * iterations/s of a goto ping-pong between two bash scripts handing a 1 MB `result` to each other
 * through stdin.
 *
 * A default run takes about 3-4 minutes on 2 cores, --quick about 1 minute. Nothing is asserted:
 * targets are printed as met / NO for a person to read (timed assertions would be flaky here).
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { benchRecords, formatRecords, type RecordsResult } from "./bench/records.js";

// ---------------------------------------------------------------------------------------------
// Options

const argv = process.argv.slice(2);
function flagValue(name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}
if (argv.includes("-h") || argv.includes("--help")) {
  console.log(
    "usage: node --import tsx/esm scripts/bench.ts [--quick] [--rounds N] [--channels node,bun,binary] [--binary <path>] [--json <file>] [--keep]\n" +
      "       (npm run bench -- <options> builds dist/ first)",
  );
  process.exit(0);
}
const QUICK = argv.includes("--quick");
const KEEP = argv.includes("--keep");
const ROUNDS = Number(flagValue("--rounds") ?? (QUICK ? 3 : 5));
const CHANNEL_FILTER = new Set((flagValue("--channels") ?? "node,bun,binary").split(","));
const JSON_OUT = flagValue("--json");
/** Target wall time of one measurement (one loopx run or one raw driver run). */
const BUDGET_MS = QUICK ? 250 : 450;
const MIN_N = QUICK ? 2 : 3;
const MAX_N = 400;
const RSS_ITERATIONS = QUICK ? 1000 : 10_000;
const RSS_FIRST = 100;
const STARTUP_RUNS = QUICK ? 5 : 11;
const PING_ROUNDS = QUICK ? 2 : 3;
const HELPER_ROUNDS = QUICK ? 2 : 3;
const PAYLOAD_BYTES = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Paths

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DIST_BIN = join(ROOT, "dist", "bin.js");
const NODE = process.execPath;
const BUN = realpathSync(join(ROOT, "node_modules", ".bin", "bun"));
const BINARY = flagValue("--binary") ?? join(ROOT, "dist", "bin", `loopx-${process.platform}-${process.arch === "arm64" ? "arm64" : "x64"}`);
const TSX_ESM_URL = pathToFileURL(join(ROOT, "node_modules", "tsx", "dist", "esm", "index.mjs")).href;

if (!existsSync(DIST_BIN)) {
  console.error(`bench: ${DIST_BIN} is missing: build first (npm run build), or use npm run bench, which builds`);
  process.exit(1);
}

// ---------------------------------------------------------------------------------------------
// The benchmark project

const KINDS = ["sh", "js", "ts", "tsx"] as const;
type Kind = (typeof KINDS)[number];
const KIND_LABEL: Record<Kind, string> = { sh: "bash", js: "JS", ts: "TS", tsx: "TSX" };

const WORK = realpathSync(mkdtempSync(join(tmpdir(), "loopx-bench-")));
const PROJECT = join(WORK, "project");
const HOME = join(WORK, "home");
const PROBE_OUT = join(WORK, "probe");
const DRIVER = join(WORK, "driver.mjs");
const EMPTY_JS = join(WORK, "empty.mjs");

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

function scriptPath(workflow: string, kind: Kind): string {
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
function rssFile(channel: string, name: string): string {
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

function createProject(): void {
  const moduleJson = '{ "type": "module" }\n';
  for (const kind of KINDS) {
    writeFile(scriptPath(kind, kind), NOOP[kind]);
    writeFile(scriptPath("probe", kind), PROBE[kind]);
    // `node --import tsx/esm x.ts` (the raw Node command) needs "type": "module" to treat .ts as
    // ESM; loopx forces ESM itself, so this only makes the raw command work on the same file.
    if (kind !== "sh") writeFile(join(PROJECT, ".loopx", kind, "package.json"), moduleJson);
  }
  writeFile(join(PROJECT, ".loopx", "probe", "package.json"), moduleJson);
  // A TS script using the documented helper, and the same script writing its JSON by hand.
  writeFile(join(PROJECT, ".loopx", "tsout", "index.ts"), 'import { output } from "loopx";\nconst result: string = "x";\noutput({ result });\n');
  writeFile(join(PROJECT, ".loopx", "tsjson", "index.ts"), 'const result: string = "x";\nprocess.stdout.write(JSON.stringify({ result }));\nexport {};\n');
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
const BASE_ENV: Record<string, string> = {
  PATH: `${dirname(NODE)}:/usr/local/bin:/usr/bin:/bin`,
  HOME,
  XDG_CONFIG_HOME: join(HOME, ".config"),
  LANG: "C.UTF-8",
  ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
};

// ---------------------------------------------------------------------------------------------
// Channels

interface Channel {
  name: "node" | "bun" | "binary";
  /** How to start loopx. */
  loopx: string[];
  /** How to start the raw driver (a runtime able to run an .mjs file). */
  driver: string[];
  /** Extra environment for the driver and for raw commands (BUN_BE_BUN for the binary). */
  rawEnv: Record<string, string>;
  /** The raw interpreter command for a JS/TS script (the issue's definition). */
  rawScript(path: string): string[];
  rawLabel: string;
}

function channels(): { active: Channel[]; notes: string[] } {
  const notes: string[] = [];
  const all: Channel[] = [
    {
      name: "node",
      loopx: [NODE, DIST_BIN],
      driver: [NODE],
      rawEnv: {},
      rawScript: (path) => [NODE, "--import", TSX_ESM_URL, path],
      rawLabel: "node --import tsx/esm <script>",
    },
    { name: "bun", loopx: [BUN, DIST_BIN], driver: [BUN], rawEnv: {}, rawScript: (path) => [BUN, path], rawLabel: "bun <script>" },
  ];
  if (existsSync(BINARY)) {
    all.push({
      name: "binary",
      loopx: [BINARY],
      driver: [BINARY],
      rawEnv: { BUN_BE_BUN: "1" },
      rawScript: (path) => [BINARY, path],
      rawLabel: "BUN_BE_BUN=1 <binary> <script>",
    });
  } else if (CHANNEL_FILTER.has("binary")) {
    notes.push(`binary channel skipped: ${BINARY} does not exist (build it with node scripts/build-binaries.mjs --host)`);
  }
  return { active: all.filter((c) => CHANNEL_FILTER.has(c.name)), notes };
}

// ---------------------------------------------------------------------------------------------
// Process helpers

interface Finished {
  ms: number;
  /** CPU time (user + system) of the process and all its descendants, from this process's rusage of reaped children. */
  cpuMs: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function run(
  command: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number; onSpawn?: (pid: number) => void } = {},
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const cpuStart = childrenCpuMs();
    const start = performance.now();
    const child = spawn(command[0]!, command.slice(1), {
      cwd: options.cwd ?? PROJECT,
      env: options.env ?? BASE_ENV,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timeoutMs = options.timeoutMs ?? 120_000;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`timed out after ${timeoutMs} ms: ${command.join(" ")}`));
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ ms: performance.now() - start, cpuMs: childrenCpuMs() - cpuStart, code, signal, stdout, stderr });
    });
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
  });
}

const TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** CPU time of this process's reaped children (cutime + cstime, which include their own reaped descendants). */
function childrenCpuMs(): number {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND;
}

function describeFailure(command: string[], result: Finished): string {
  const status = result.code ?? result.signal;
  return `${command.map(shortPath).join(" ")} exited with ${status}${result.stderr ? `: ${result.stderr.trim().split("\n").slice(-3).join(" | ")}` : ""}`;
}

async function runOk(command: string[], options: Parameters<typeof run>[1] = {}): Promise<Finished> {
  const result = await run(command, options);
  if (result.code !== 0) throw new Error(describeFailure(command, result));
  return result;
}

function shortPath(text: string): string {
  return text.split(WORK).join("$BENCH").split(ROOT.replace(/\/$/, "")).join("$REPO");
}

function median(values: number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------------------------------------
// Raw driver and loopx timing

interface RawCommand {
  cmd: string[];
  env: Record<string, string>;
  cwd: string;
  stdinFile?: string;
}

interface Timing {
  /** Wall milliseconds. */
  ms: number;
  /** CPU milliseconds (user + system, all processes involved). */
  cpuMs: number;
}

/** Wall and CPU milliseconds per start of `raw.cmd`, measured inside the driver (its start-up and warm-up excluded). */
async function rawPerIteration(channel: Channel, raw: RawCommand, n: number, warmup: number): Promise<Timing> {
  const specFile = join(WORK, `spec-${channel.name}.json`);
  writeFileSync(
    specFile,
    JSON.stringify({ cmd: raw.cmd[0], args: raw.cmd.slice(1), cwd: raw.cwd, env: raw.env, n, warmup, stdinFile: raw.stdinFile, ticksPerSecond: TICKS_PER_SECOND }),
  );
  const command = [...channel.driver, DRIVER, specFile];
  const result = await runOk(command, { env: { ...BASE_ENV, ...channel.rawEnv }, timeoutMs: 60_000 + n * 5_000 });
  const { ms, cpuMs } = JSON.parse(result.stdout.trim().split("\n").pop()!) as { ms: number; cpuMs: number };
  return { ms: ms / n, cpuMs: cpuMs / n };
}

/** Wall and CPU time of a whole `loopx run -n n <workflow>` (start-up included: subtract the `-n 0` time). */
async function loopxRun(channel: Channel, workflow: string, n: number): Promise<Timing> {
  const command = [...channel.loopx, "run", "-n", String(n), workflow];
  const result = await runOk(command, { timeoutMs: 60_000 + n * 5_000 });
  if (result.stderr) throw new Error(`unexpected stderr from ${command.map(shortPath).join(" ")}: ${result.stderr.trim()}`);
  return { ms: result.ms, cpuMs: result.cpuMs };
}

// ---------------------------------------------------------------------------------------------
// Probe: the exact command line and environment loopx gives each kind of script

interface Probe {
  /** argv of the script process as loopx started it, with the probe path replaced by a placeholder. */
  argv: string[];
  env: Record<string, string>;
  /** True if the script process is a direct child of loopx (no wrapper process in between). */
  directChild: boolean;
  parentNote: string;
}

const SCRIPT_PLACEHOLDER = "\u0000SCRIPT\u0000";

async function probe(channel: Channel, kind: Kind): Promise<Probe> {
  for (const ext of ["cmdline", "environ", "ppid"]) rmSync(join(PROBE_OUT, `${kind}.${ext}`), { force: true });
  let loopxPid = -1;
  const command = [...channel.loopx, "run", "-n", "1", `probe:${kind}`];
  const result = await run(command, {
    env: { ...BASE_ENV, BENCH_PROBE_OUT: PROBE_OUT, BENCH_PROBE_KIND: kind },
    onSpawn: (pid) => (loopxPid = pid),
  });
  if (result.code !== 0 || !existsSync(join(PROBE_OUT, `${kind}.cmdline`))) throw new Error(describeFailure(command, result));
  const probePath = scriptPath("probe", kind);
  const cmdline = readFileSync(join(PROBE_OUT, `${kind}.cmdline`), "utf8").split("\0").filter((arg, i, all) => arg !== "" || i < all.length - 1);
  const argv = cmdline.map((arg) => (arg === probePath ? SCRIPT_PLACEHOLDER : arg));
  const env: Record<string, string> = {};
  for (const entry of readFileSync(join(PROBE_OUT, `${kind}.environ`), "utf8").split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  delete env.BENCH_PROBE_OUT;
  delete env.BENCH_PROBE_KIND;
  env.LOOPX_WORKFLOW = kind;
  const ppid = Number(readFileSync(join(PROBE_OUT, `${kind}.ppid`), "utf8").trim());
  const directChild = ppid === loopxPid;
  const parentNote = directChild ? "direct child of loopx" : `parent pid ${ppid} is not loopx (pid ${loopxPid}): a wrapper process sits in between`;
  if (!argv.includes(SCRIPT_PLACEHOLDER)) throw new Error(`probe: script path not found in the command line ${cmdline.map(shortPath).join(" ")}`);
  return { argv, env, directChild, parentNote };
}

function withScript(argv: string[], path: string): string[] {
  return argv.map((arg) => (arg === SCRIPT_PLACEHOLDER ? path : arg));
}

// ---------------------------------------------------------------------------------------------
// Phase 1: loopx vs raw, alternating rounds

interface Cell {
  channel: Channel["name"];
  kind: Kind;
  n: number;
  raw: RawCommand;
  /** loopx's exact command, when it differs from `raw`. */
  exact?: RawCommand;
  probe: Probe;
  loopx: Timing[];
  rawTimes: Timing[];
  exactTimes: Timing[];
}

interface CellResult {
  channel: string;
  kind: string;
  n: number;
  loopxMs: number;
  rawMs: number;
  ratio: number;
  ratioRange: [number, number];
  loopxCpuMs: number;
  rawCpuMs: number;
  exactMs?: number;
  exactRatio?: number;
  target: string;
  met: boolean;
  rawCommand: string;
  exactCommand: string;
  scriptProcess: string;
}

function targetFor(channel: Channel["name"], kind: Kind): { label: string; check(loopx: number, raw: number): boolean } {
  if (kind === "sh") return { label: "<= 1.10 x raw + 1 ms", check: (l, r) => l <= 1.1 * r + 1 };
  if (channel === "node") return { label: "<= 1.15 x raw", check: (l, r) => l <= 1.15 * r };
  return { label: "<= 1.10 x raw", check: (l, r) => l <= 1.1 * r };
}

function sameCommand(a: RawCommand, b: RawCommand): boolean {
  return a.cmd.join("\0") === b.cmd.join("\0");
}

function perIteration(runs: Timing[], startup: Timing, n: number): Timing[] {
  return runs.map((t) => ({ ms: (t.ms - startup.ms) / n, cpuMs: (t.cpuMs - startup.cpuMs) / n }));
}

function medianTiming(times: Timing[]): Timing {
  return { ms: median(times.map((t) => t.ms)), cpuMs: median(times.map((t) => t.cpuMs)) };
}

async function measureLoop(active: Channel[], notes: string[]) {
  const cells: Cell[] = [];
  const startup = new Map<string, Timing[]>();
  const usable: Channel[] = [];
  for (const channel of active) {
    let ok = true;
    for (const kind of KINDS) {
      let probed: Probe;
      try {
        probed = await probe(channel, kind);
      } catch (error) {
        notes.push(`${channel.name}/${KIND_LABEL[kind]}: loopx cannot run the probe script, skipped: ${(error as Error).message}`);
        if (kind === "sh") ok = false;
        continue;
      }
      const path = scriptPath(kind, kind);
      const cwd = dirname(path);
      const raw: RawCommand =
        kind === "sh"
          ? { cmd: ["/bin/bash", path], env: { ...BASE_ENV, ...channel.rawEnv }, cwd }
          : { cmd: channel.rawScript(path), env: { ...BASE_ENV, ...channel.rawEnv }, cwd };
      const exactCandidate: RawCommand = { cmd: withScript(probed.argv, path), env: probed.env, cwd };
      const cell: Cell = { channel: channel.name, kind, n: 0, raw, probe: probed, loopx: [], rawTimes: [], exactTimes: [] };
      if (!sameCommand(raw, exactCandidate)) cell.exact = exactCandidate;
      // Calibrate N (and warm caches such as tsx's transform cache) on the raw command.
      const estimate = await rawPerIteration(channel, raw, 3, 2);
      if (cell.exact) await rawPerIteration(channel, cell.exact, 1, 2);
      cell.n = Math.max(MIN_N, Math.min(MAX_N, Math.round(BUDGET_MS / estimate.ms)));
      cells.push(cell);
    }
    if (ok) {
      usable.push(channel);
      startup.set(channel.name, []);
    } else {
      notes.push(`${channel.name} channel skipped: loopx does not run a bash script there`);
    }
  }
  const liveCells = cells.filter((cell) => usable.some((c) => c.name === cell.channel));

  for (let round = 0; round < ROUNDS; round++) {
    process.stderr.write(`  round ${round + 1}/${ROUNDS}\n`);
    for (const channel of usable) {
      startup.get(channel.name)!.push(await loopxRun(channel, "sh", 0));
      for (const cell of liveCells.filter((c) => c.channel === channel.name)) {
        // Alternate which goes first, so drift in machine load does not favour one side.
        const steps = [
          async () => cell.loopx.push(await loopxRun(channel, cell.kind, cell.n)),
          async () => cell.rawTimes.push(await rawPerIteration(channel, cell.raw, cell.n, 1)),
          ...(cell.exact ? [async () => cell.exactTimes.push(await rawPerIteration(channel, cell.exact!, cell.n, 1))] : []),
        ];
        if (round % 2 === 1) steps.reverse();
        for (const step of steps) await step();
      }
      startup.get(channel.name)!.push(await loopxRun(channel, "sh", 0));
    }
  }

  const startupTimes = new Map([...startup].map(([name, samples]) => [name, medianTiming(samples)]));
  const results: CellResult[] = [];
  for (const cell of liveCells) {
    const channel = usable.find((c) => c.name === cell.channel)!;
    const perRound = perIteration(cell.loopx, startupTimes.get(cell.channel)!, cell.n);
    const loopx = medianTiming(perRound);
    const raw = medianTiming(cell.rawTimes);
    const ratios = perRound.map((l, i) => l.ms / cell.rawTimes[i]!.ms);
    const target = targetFor(cell.channel, cell.kind);
    const exact = cell.exact ? medianTiming(cell.exactTimes) : undefined;
    results.push({
      channel: cell.channel,
      kind: KIND_LABEL[cell.kind],
      n: cell.n,
      loopxMs: loopx.ms,
      rawMs: raw.ms,
      ratio: loopx.ms / raw.ms,
      ratioRange: [Math.min(...ratios), Math.max(...ratios)],
      loopxCpuMs: loopx.cpuMs,
      rawCpuMs: raw.cpuMs,
      exactMs: exact?.ms,
      exactRatio: exact ? loopx.ms / exact.ms : undefined,
      target: target.label,
      met: target.check(loopx.ms, raw.ms),
      rawCommand: cell.kind === "sh" ? "/bin/bash <script>" : channel.rawLabel,
      exactCommand: shortPath(withScript(cell.probe.argv, "<script>").join(" ")) + envNote(cell.probe.env),
      scriptProcess: cell.probe.parentNote,
    });
  }
  return { results, startupTimes, usable };
}

/** The environment variables loopx adds that matter to the interpreter (not LOOPX_*, which are spec'd). */
function envNote(env: Record<string, string>): string {
  const interesting = Object.keys(env).filter((key) => !(key in BASE_ENV) && !key.startsWith("LOOPX_"));
  return interesting.length ? `  [env: ${interesting.map((key) => `${key}=${shortPath(env[key]!)}`).join(" ")}]` : "";
}

// ---------------------------------------------------------------------------------------------
// Phase 2: start-up of `loopx version` / `loopx output` per channel

interface StartupResult {
  channel: string;
  version: number;
  output: number;
  runtimeEmpty: number;
}

async function measureStartup(usable: Channel[]): Promise<StartupResult[]> {
  const samples = new Map<string, { version: number[]; output: number[]; empty: number[] }>();
  for (const channel of usable) samples.set(channel.name, { version: [], output: [], empty: [] });
  for (let i = 0; i < STARTUP_RUNS; i++) {
    for (const channel of usable) {
      const s = samples.get(channel.name)!;
      s.version.push((await runOk([...channel.loopx, "version"])).ms);
      s.output.push((await runOk([...channel.loopx, "output", "--result", "x", "--goto", "y"])).ms);
      s.empty.push((await runOk([...channel.driver, EMPTY_JS], { env: { ...BASE_ENV, ...channel.rawEnv } })).ms);
    }
  }
  return usable.map((channel) => {
    const s = samples.get(channel.name)!;
    return { channel: channel.name, version: median(s.version), output: median(s.output), runtimeEmpty: median(s.empty) };
  });
}

// ---------------------------------------------------------------------------------------------
// Phase 3: what `import { output } from "loopx"` costs a TS script

interface HelperResult {
  channel: string;
  n: number;
  withHelper: number;
  plain: number;
}

async function measureHelperImport(usable: Channel[], startup: Map<string, Timing>): Promise<HelperResult[]> {
  const results: HelperResult[] = [];
  for (const channel of usable) {
    const probeRun = await run([...channel.loopx, "run", "-n", "1", "tsout"]);
    if (probeRun.code !== 0 || probeRun.stderr) {
      process.stderr.write(`  ${channel.name}: the output() script fails, skipped: ${describeFailure([...channel.loopx, "run", "tsout"], probeRun)}\n`);
      continue;
    }
    const estimate = (await loopxRun(channel, "tsout", 2)).ms / 2;
    const n = Math.max(MIN_N, Math.min(MAX_N, Math.round(BUDGET_MS / estimate)));
    const withHelper: Timing[] = [];
    const plain: Timing[] = [];
    for (let round = 0; round < HELPER_ROUNDS; round++) {
      const steps = [async () => withHelper.push(await loopxRun(channel, "tsout", n)), async () => plain.push(await loopxRun(channel, "tsjson", n))];
      if (round % 2 === 1) steps.reverse();
      for (const step of steps) await step();
    }
    const start = startup.get(channel.name)!;
    results.push({
      channel: channel.name,
      n,
      withHelper: medianTiming(perIteration(withHelper, start, n)).ms,
      plain: medianTiming(perIteration(plain, start, n)).ms,
    });
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// Phase 4: 1 MB goto ping-pong

interface PingResult {
  channel: string;
  n: number;
  loopx1m: number;
  loopx1b: number;
  raw1m: number;
  raw1b: number;
}

async function measurePingPong(usable: Channel[], startup: Map<string, Timing>): Promise<PingResult[]> {
  const results: PingResult[] = [];
  for (const channel of usable) {
    const samples = { loopx1m: [] as Timing[], loopx1b: [] as Timing[], raw1m: [] as Timing[], raw1b: [] as Timing[] };
    const rawFor = (bytes: number): RawCommand => {
      const workflow = bytes === 1 ? "ping1b" : "ping1m";
      return {
        cmd: ["/bin/bash", join(PROJECT, ".loopx", workflow, "ping.sh")],
        env: { ...BASE_ENV, ...channel.rawEnv },
        cwd: join(PROJECT, ".loopx", workflow),
        stdinFile: join(PROJECT, `payload-${bytes}`),
      };
    };
    // The result must arrive intact: index -> ping -> pong -> check, which compares it with the payload.
    for (const workflow of ["check1m", "check1b"]) {
      const command = [...channel.loopx, "run", "-n", "4", workflow];
      const result = await run(command);
      if (result.code !== 0 || result.stderr) throw new Error(describeFailure(command, result));
    }
    const estimate = await rawPerIteration(channel, rawFor(PAYLOAD_BYTES), 3, 2);
    const n = Math.max(MIN_N, Math.min(MAX_N, Math.round(BUDGET_MS / estimate.ms)));
    for (let round = 0; round < PING_ROUNDS; round++) {
      const steps = [
        async () => samples.loopx1m.push(await loopxRun(channel, "ping1m", n)),
        async () => samples.raw1m.push(await rawPerIteration(channel, rawFor(PAYLOAD_BYTES), n, 1)),
        async () => samples.loopx1b.push(await loopxRun(channel, "ping1b", n)),
        async () => samples.raw1b.push(await rawPerIteration(channel, rawFor(1), n, 1)),
      ];
      if (round % 2 === 1) steps.reverse();
      for (const step of steps) await step();
    }
    const start = startup.get(channel.name)!;
    results.push({
      channel: channel.name,
      n,
      loopx1m: medianTiming(perIteration(samples.loopx1m, start, n)).ms,
      loopx1b: medianTiming(perIteration(samples.loopx1b, start, n)).ms,
      raw1m: medianTiming(samples.raw1m).ms,
      raw1b: medianTiming(samples.raw1b).ms,
    });
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// Phase 5: RSS and open fds over a long bash loop

interface RssResult {
  channel: string;
  iterations: number;
  rssFirstKb: number;
  rssLastKb: number;
  fdsFirst: number;
  fdsLast: number;
  msPerIteration: number;
}

function procStatus(pid: number): { rssKb: number; fds: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rssKb = Number(status.match(/^VmRSS:\s+(\d+)\s+kB/m)?.[1] ?? NaN);
  return { rssKb, fds: readdirSync(`/proc/${pid}/fd`).length };
}

async function waitForFile(path: string, timeoutMs: number, alive: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(path)) {
    if (!alive()) throw new Error(`loopx exited before ${shortPath(path)} appeared`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${shortPath(path)}`);
    await sleep(10);
  }
}

/**
 * One long loop per channel, all channels at once (RSS and fds do not depend on timing much, and
 * 10,000 iterations per channel one after the other would dominate the bench's run time).
 */
async function measureRss(usable: Channel[]): Promise<RssResult[]> {
  return Promise.all(usable.map((channel) => measureRssOne(channel)));
}

async function measureRssOne(channel: Channel): Promise<RssResult> {
  const file = (name: string) => rssFile(channel.name, name);
  for (const name of ["counter", `at-${RSS_FIRST}`, `release-${RSS_FIRST}`, `at-${RSS_ITERATIONS}`, `release-${RSS_ITERATIONS}`]) {
    rmSync(file(name), { force: true });
  }
  let pid = -1;
  let finished = false;
  const command = [...channel.loopx, "run", "-n", String(RSS_ITERATIONS), `rss-${channel.name}`];
  const running = run(command, { timeoutMs: 60_000 + RSS_ITERATIONS * 50, onSpawn: (p) => (pid = p) }).finally(() => (finished = true));
  const alive = () => !finished;
  try {
    await waitForFile(file(`at-${RSS_FIRST}`), 120_000, alive);
    const first = procStatus(pid);
    const t0 = performance.now();
    writeFileSync(file(`release-${RSS_FIRST}`), "");
    await waitForFile(file(`at-${RSS_ITERATIONS}`), 60_000 + RSS_ITERATIONS * 40, alive);
    const elapsed = performance.now() - t0;
    const last = procStatus(pid);
    writeFileSync(file(`release-${RSS_ITERATIONS}`), "");
    const result = await running;
    if (result.code !== 0) throw new Error(describeFailure(command, result));
    return {
      channel: channel.name,
      iterations: RSS_ITERATIONS,
      rssFirstKb: first.rssKb,
      rssLastKb: last.rssKb,
      fdsFirst: first.fds,
      fdsLast: last.fds,
      msPerIteration: elapsed / (RSS_ITERATIONS - RSS_FIRST),
    };
  } catch (error) {
    writeFileSync(file(`release-${RSS_FIRST}`), "");
    writeFileSync(file(`release-${RSS_ITERATIONS}`), "");
    await running.catch(() => undefined);
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Report

function fmt(value: number | undefined, digits = 2): string {
  return value === undefined || !Number.isFinite(value) ? "-" : value.toFixed(digits);
}

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd();
  return [line(headers), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

function loadAverage(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  } catch {
    return "?";
  }
}

async function main(): Promise<void> {
  createProject();
  const { active, notes } = channels();
  const startedAt = performance.now();
  const cpus = readFileSync("/proc/cpuinfo", "utf8").match(/^processor\s*:/gm)?.length ?? "?";
  console.log(
    `loopx bench${QUICK ? " (--quick)" : ""}: ${ROUNDS} rounds, ~${BUDGET_MS} ms per measurement; node ${process.version}, ` +
      `bun ${(await runOk([BUN, "--version"])).stdout.trim()}, ${cpus} CPUs, load ${loadAverage()}`,
  );
  console.log(`channels: ${active.map((c) => c.name).join(", ")}; project in ${WORK}`);
  for (const note of notes) console.log(`note: ${note}`);

  const phases: string[] = [];
  async function phase<T>(name: string, measure: () => Promise<T>): Promise<T> {
    process.stderr.write(`measuring ${name}...\n`);
    const t0 = performance.now();
    const result = await measure();
    phases.push(`${name} ${fmt((performance.now() - t0) / 1000, 0)} s`);
    return result;
  }
  const loop = await phase("loopx vs raw per iteration", () => measureLoop(active, notes));
  const startup = await phase("start-up", () => measureStartup(loop.usable));
  const helper = await phase('import { output } from "loopx"', () => measureHelperImport(loop.usable, loop.startupTimes));
  const ping = await phase("1 MB ping-pong", () => measurePingPong(loop.usable, loop.startupTimes));
  const rss = await phase(`RSS and fds over ${RSS_ITERATIONS} iterations`, () => measureRss(loop.usable));

  console.log("\n== Per-iteration cost: loopx run -n N vs raw interpreter start (medians of alternating rounds) ==");
  console.log(
    table(
      ["channel", "script", "loopx ms/iter", "raw ms/iter", "ratio", "target", "met"],
      loop.results.map((r) => [r.channel, r.kind, fmt(r.loopxMs), fmt(r.rawMs), fmt(r.ratio, 3), r.target, r.met ? "yes" : "NO"]),
    ),
  );
  console.log("\nDetails: per-round ratio range; CPU (user+sys of every process involved) per iteration; raw' = loopx's exact command");
  console.log(
    table(
      ["channel", "script", "ratio range", "loopx CPU ms", "raw CPU ms", "CPU ratio", "raw' ms/iter", "loopx/raw'", "raw'/raw", "N"],
      loop.results.map((r) => [
        r.channel,
        r.kind,
        `${fmt(r.ratioRange[0])}-${fmt(r.ratioRange[1])}`,
        fmt(r.loopxCpuMs),
        fmt(r.rawCpuMs),
        fmt(r.loopxCpuMs / r.rawCpuMs, 3),
        r.exactMs === undefined ? "= raw" : fmt(r.exactMs),
        r.exactRatio === undefined ? "" : fmt(r.exactRatio, 3),
        r.exactMs === undefined ? "" : fmt(r.exactMs / r.rawMs, 3),
        String(r.n),
      ]),
    ),
  );
  console.log(
    "raw = the issue's physical limit; raw' = loopx's exact interpreter command and environment (as probed); both are started\n" +
      "by a minimal driver on the channel's runtime with loopx's wiring. loopx ms/iter = (wall(run -n N) - wall(run -n 0)) / N;\n" +
      `run -n 0 start-up: ${loop.usable.map((c) => `${c.name} ${fmt(loop.startupTimes.get(c.name)!.ms)} ms`).join(", ")}.`,
  );
  console.log("\nCommands:");
  for (const r of loop.results) {
    const key = `${r.channel}/${r.kind}`;
    console.log(`  ${key.padEnd(11)} raw: ${r.rawCommand}\n  ${"".padEnd(11)} loopx runs: ${r.exactCommand}  (${r.scriptProcess})`);
  }

  console.log("\n== Start-up (median wall ms) ==");
  console.log(
    table(
      ["channel", "", "loopx version", "loopx output", "runtime, empty script", "version overhead"],
      startup.map((s) => [s.channel, "", fmt(s.version, 1), fmt(s.output, 1), fmt(s.runtimeEmpty, 1), fmt(s.version - s.runtimeEmpty, 1)]),
    ),
  );

  console.log('\n== TS script cost of `import { output } from "loopx"` (loopx ms/iter, medians) ==');
  console.log(
    table(
      ["channel", "", "output() via loopx", "same JSON by hand", "import cost"],
      helper.map((h) => [h.channel, "", fmt(h.withHelper), fmt(h.plain), fmt(h.withHelper - h.plain)]),
    ),
  );

  console.log("\n== Goto ping-pong between two bash scripts, result through stdin (medians) ==");
  console.log(
    table(
      ["channel", "", "1 MB iter/s", "1 MB ms/iter", "1 B ms/iter", "hand-off ms", "<5 ms", "raw 1 MB", "raw 1 B", "raw hand-off", "loopx share"],
      ping.map((p) => {
        const handoff = p.loopx1m - p.loopx1b;
        return [
          p.channel,
          "",
          fmt(1000 / p.loopx1m, 0),
          fmt(p.loopx1m),
          fmt(p.loopx1b),
          fmt(handoff),
          handoff < 5 ? "yes" : "NO",
          fmt(p.raw1m),
          fmt(p.raw1b),
          fmt(p.raw1m - p.raw1b),
          fmt(handoff - (p.raw1m - p.raw1b)),
        ];
      }),
    ),
  );
  console.log(
    "hand-off = loopx 1 MB - loopx 1 B per iteration (bash's own `cat` of 1 MB included); raw = the same script started by the\n" +
      "driver with the payload as stdin; loopx share = hand-off - raw hand-off.",
  );

  console.log(`\n== loopx memory and fds over a ${RSS_ITERATIONS}-iteration bash loop ==`);
  console.log(
    table(
      ["channel", "", `RSS @${RSS_FIRST} MB`, `RSS @${RSS_ITERATIONS} MB`, "growth MB", "<5 MB", `fds @${RSS_FIRST}`, `fds @${RSS_ITERATIONS}`, "fd growth", "ms/iter (concurrent)"],
      rss.map((r) => [
        r.channel,
        "",
        fmt(r.rssFirstKb / 1024, 1),
        fmt(r.rssLastKb / 1024, 1),
        fmt((r.rssLastKb - r.rssFirstKb) / 1024, 1),
        (r.rssLastKb - r.rssFirstKb) / 1024 < 5 ? "yes" : "NO",
        String(r.fdsFirst),
        String(r.fdsLast),
        String(r.fdsLast - r.fdsFirst),
        fmt(r.msPerIteration),
      ]),
    ),
  );
  // Run records (issue 13): records on vs off, same machine, same time (scripts/bench/records.ts).
  let records: RecordsResult | undefined;
  if (CHANNEL_FILTER.has("bun")) {
    records = await benchRecords({ quick: QUICK });
    console.log(`\n${formatRecords(records)}`);
  }
  for (const note of notes) console.log(`note: ${note}`);
  console.log(`\nbench took ${fmt((performance.now() - startedAt) / 1000, 0)} s (${phases.join(", ")}); load now ${loadAverage()}`);

  if (JSON_OUT) {
    const runStartup = Object.fromEntries(loop.startupTimes);
    writeFileSync(JSON_OUT, JSON.stringify({ quick: QUICK, rounds: ROUNDS, loop: loop.results, runStartup, startup, helper, ping, rss, records, notes }, null, 2) + "\n");
    console.log(`wrote ${JSON_OUT}`);
  }
}

process.on("SIGINT", () => {
  if (!KEEP) rmSync(WORK, { recursive: true, force: true });
  process.exit(130);
});

try {
  await main();
} catch (error) {
  console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  if (KEEP) console.log(`kept ${WORK}`);
  else rmSync(WORK, { recursive: true, force: true });
}

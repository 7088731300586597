// The loopx GitHub Action's entry (action.yml runs it with the runner's `node`). Plain ESM on Node's
// own modules: the action runs from the repository as checked out at its tag, with no build and no
// node_modules. It fetches the release binary of the action's own version (checked against the
// release's SHA256SUMS, kept in the runner's tool cache), runs `loopx run`, passes the runner's
// cancellation signals on, writes the run's receipt as the job summary and the outputs, and exits
// as `loopx run` did — so the job fails exactly when the run would.
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { resolveLoopx } from "./binary.mjs";
import { splitArgs } from "./args.mjs";

/** An input as the runner gives it: INPUT_<NAME upper-cased, spaces as _>, trimmed. */
export function input(name, env = process.env) {
  return (env[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] ?? "").trim();
}

/** One line to the job's log, in the runner's annotation form for errors. */
function fail(message) {
  process.stdout.write(`::error title=loopx::${message.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A")}\n`);
}

/** `name<<delimiter` form (GITHUB_OUTPUT): a value can never end the block early. */
function writeOutputs(outputs, env) {
  if (!env.GITHUB_OUTPUT) return;
  let text = "";
  for (const [name, value] of Object.entries(outputs)) {
    if (value === undefined || value === null) continue;
    const delimiter = `loopx_${Math.random().toString(36).slice(2)}`;
    text += `${name}<<${delimiter}\n${String(value)}\n${delimiter}\n`;
  }
  appendFileSync(env.GITHUB_OUTPUT, text);
}

/**
 * Runs `loopx <args>` in `cwd` with the job's stdio. SIGINT and SIGTERM to this process (the
 * runner's cancellation: SIGINT, then SIGTERM, then SIGKILL) are passed to loopx, which ends its
 * scripts as on a terminal; its guardian covers the SIGKILL. Resolves with the exit code.
 */
/** @param {string} loopx @param {string[]} args @param {string} cwd @param {NodeJS.ProcessEnv} env @param {import("node:child_process").StdioOptions} [stdio] */
export function runLoopx(loopx, args, cwd, env, stdio = "inherit") {
  return new Promise((done) => {
    const child = spawn(loopx, args, { cwd, env, stdio });
    const pass = (signal) => () => child.kill(signal);
    const onInt = pass("SIGINT");
    const onTerm = pass("SIGTERM");
    process.on("SIGINT", onInt);
    process.on("SIGTERM", onTerm);
    child.on("error", (error) => done({ code: 1, error }));
    child.on("close", (code, signal) => {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      done({ code: code ?? 128 + (signal === "SIGKILL" ? 9 : signal === "SIGTERM" ? 15 : 2) });
    });
  });
}

/** What `loopx <args>` printed on stdout (its stderr goes to the job's log), or undefined if it failed. */
async function capture(loopx, args, cwd, env) {
  return new Promise((done) => {
    const child = spawn(loopx, args, { cwd, env, stdio: ["ignore", "pipe", "inherit"] });
    const chunks = [];
    child.stdout.on("data", (chunk) => chunks.push(chunk));
    child.on("error", () => done(undefined));
    child.on("close", (code) => done(code === 0 ? Buffer.concat(chunks).toString("utf8") : undefined));
  });
}

/**
 * The run id from the first event of the run's --log file (loopx's own `run.start`).
 * @param {string} path
 */
function runIdFromLog(path) {
  try {
    const first = readFileSync(path, "utf8").split("\n", 1)[0] ?? "";
    const id = JSON.parse(first).run;
    return typeof id === "string" && /^[0-9a-z-]+$/i.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The outputs of the action for run `id`, from `loopx runs show <id> --outcome`. */
function outputsOf(summary, code) {
  const outputs = { "exit-code": code };
  if (!summary) return outputs;
  Object.assign(outputs, {
    "run-id": summary.id,
    state: summary.state,
    iterations: summary.iterations,
    "duration-ms": summary.durationMs,
    record: summary.record,
  });
  const totals = summary.totals;
  if (totals && totals.receipts > 0) {
    outputs["cost-billed-usd"] = totals.costUsd.billed;
    outputs["cost-estimate-usd"] = totals.costUsd.estimate;
    outputs["tokens-input"] = totals.tokens.input;
    outputs["tokens-output"] = totals.tokens.output;
    outputs["tokens-cache-read"] = totals.tokens.cacheRead;
    outputs["tokens-cache-write"] = totals.tokens.cacheWrite;
    outputs["tokens-reasoning"] = totals.tokens.reasoning;
  }
  return outputs;
}

/** Adds the run's receipt (Markdown, by loopx itself) to the job summary. */
async function writeSummary(loopx, id, cwd, env) {
  if (!env.GITHUB_STEP_SUMMARY) return;
  const markdown = id ? await capture(loopx, ["runs", "show", id, "--markdown"], cwd, env) : undefined;
  appendFileSync(env.GITHUB_STEP_SUMMARY, markdown ?? "### loopx\n\nThe run did not start: its error is in the job's log.\n");
}

/**
 * The inputs sandbox and sandbox-allow as `loopx run` arguments. A Linux runner without bubblewrap
 * gets Debian's (GitHub's Ubuntu runners have passwordless sudo); without it loopx refuses to run.
 */
function sandboxArgs(env) {
  const on = /^(true|on|1|yes)$/i.test(input("sandbox", env));
  if (!on) return [];
  if (process.platform === "linux" && spawnSync("sh", ["-c", "command -v bwrap"]).status !== 0) {
    const sudo = process.getuid?.() === 0 ? "" : "sudo ";
    spawnSync("sh", ["-c", `${sudo}apt-get update -qq && ${sudo}apt-get install -y -qq bubblewrap`], { stdio: ["ignore", "ignore", "inherit"] });
  }
  const allow = input("sandbox-allow", env).split(/\s+/).filter(Boolean);
  return ["--sandbox", ...allow.flatMap((rule) => ["--sandbox-allow", rule])];
}

/** The whole action: resolve loopx, install when asked, run, report. Resolves with the exit code. */
export async function main(env = process.env) {
  const target = input("target", env);
  if (!target) return fail("the input target is required (a workflow or workflow:script)"), 1;
  let extra;
  try {
    extra = splitArgs(input("args", env));
  } catch (error) {
    return fail(`the input args: ${error instanceof Error ? error.message : String(error)}`), 1;
  }
  // The inputs that are run options: before `args`, which may add to them.
  const stallAfter = input("stall-after", env);
  if (stallAfter) extra.unshift("--stall-after", stallAfter);
  const merge = input("worktree-merge", env);
  if (merge && merge !== "true" && merge !== "false") return fail(`the input worktree-merge must be true or false, got ${JSON.stringify(merge)}`), 1;
  if (merge === "true") extra.unshift("--worktree", "--worktree-merge");
  const cwd = resolve(env.GITHUB_WORKSPACE ?? process.cwd(), input("working-directory", env) || ".");
  let loopx;
  try {
    loopx = await resolveLoopx(env, input("version", env), input("loopx-path", env));
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error)), 1;
  }
  const childEnv = { ...env };
  for (const name of Object.keys(childEnv)) if (name.startsWith("INPUT_") || name.startsWith("LOOPX_ACTION_")) delete childEnv[name];
  const source = input("install", env);
  if (source) {
    const installed = await runLoopx(loopx, ["install", "-y", source], cwd, childEnv);
    if (installed.code !== 0) return fail(`loopx install ${source} failed (exit ${installed.code})`), writeOutputs({ "exit-code": installed.code }, env), installed.code;
  }
  const log = join(env.RUNNER_TEMP ?? cwd, `loopx-run-${process.pid}-${Date.now()}.jsonl`);
  const userLog = extra.findIndex((arg) => arg === "--log" || arg.startsWith("--log="));
  const logPath = userLog === -1 ? log : resolve(cwd, extra[userLog].startsWith("--log=") ? extra[userLog].slice(6) : extra[userLog + 1] ?? "");
  const args = ["run", ...(userLog === -1 ? ["--log", log] : []), ...sandboxArgs(env), ...extra, target];
  const { code } = await runLoopx(loopx, args, cwd, childEnv);
  const id = runIdFromLog(logPath);
  const summaryText = id ? await capture(loopx, ["runs", "show", id, "--outcome"], cwd, childEnv) : undefined;
  let summary;
  try {
    summary = summaryText ? JSON.parse(summaryText) : undefined;
  } catch {
    summary = undefined;
  }
  writeOutputs(outputsOf(summary, code), env);
  await writeSummary(loopx, id, cwd, childEnv);
  return code;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  // Cancellation must not end this process before loopx has ended its scripts: the handlers
  // installed around the run pass the signals on; between steps they are ignored here.
  process.on("SIGINT", () => {});
  process.on("SIGTERM", () => {});
  main().then((code) => process.exit(code));
}

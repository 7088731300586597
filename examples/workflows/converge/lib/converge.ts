// The convergence gate on loopx. A round is two or three scripts:
//   converge:index (worker agent) → converge:gate (CONVERGE_GATE) → converge:judge (judge agent)
// (the judge only when the gate passed). A failing gate or a rejecting judge sends its findings
// back to the worker as `result` (goto index); an approving judge stops the loop. "Done" means
// the gate passed AND the independent judge agreed — never that the worker said so.
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as loopx from "loopx";
import { input, output } from "loopx";
import { ledgerOf, logRound, memoryPrompt, milestone, type Ledger } from "./ledger.ts";
import { agentSpec, type AgentSpec } from "./shared/agent.ts";
import { ballot, juryConfidence, juryFindings, juryOf, parseReview, type Ballot, type Jury } from "./shared/jury.ts";
import { castBallots, changedSince, noteVerdicts, tally, treeFingerprint } from "./shared/review.ts";
import { readCaps } from "./shared/caps.ts";
import { limitPolicy } from "./shared/limits.ts";
import { activeAgent, retryIn, runAgentWithRetries } from "./shared/run-agent.ts";
import { addCost, costText, type Cost } from "./shared/usage.ts";
import { duration, durationVar, usd, fail, intVar, newLogFile, readState, resolveFrom, runDir, say, substitute, timeLimitReached, which, workflowConfig, writeState, type Vars } from "./shared/util.ts";

const NAME = "converge";
const STATE = "converge-state.json";
const FINDINGS_LIMIT = 4000;

interface Round {
  round: number;
  gate?: "passed" | "failed";
  gateCode?: number | null;
  judge?: "approved" | "rejected";
}

/** Intra-run state, kept in $LOOPX_TMPDIR. */
interface State {
  startedAt: number;
  round: number;
  rounds: Round[];
  /** What this sitting's agent calls reported, by kind (loopx's own totals span resumes). */
  totalCost?: Cost;
  /** The run's log (agent streams, their stderr, failures), under CONVERGE_DIR/logs/. */
  logFile?: string;
  /** Time spent waiting for usage limits (bounded by MAX_LIMIT_WAIT). */
  limitWaitMs?: number;
}

interface Settings {
  vars: Vars;
  workflowDir: string;
  projectRoot: string;
  task: string;
  gate: string;
  worker: AgentSpec;
  judge: AgentSpec;
  maxRetries: number;
  /** RETRY_BACKOFF: the first wait between failed attempts (run-agent.ts retryWaitMs). */
  retryBackoffMs: number;
  maxRounds: number;
  idleMs: number;
  convergeDir: string;
  /** The reviewers once the gate passed (CONVERGE_REVIEWERS; default: the one judge). */
  jury: Jury;
  /** CONVERGE_MEMORY=1: the Ledger (ledger.ts); CONVERGE_MILESTONE=1 commits on convergence. */
  ledger?: Ledger;
  milestone: boolean;
  /** The smallest rise of the jury's confidence that counts as progress for loopx's stall sensor. */
  progressStep: number;
}

function settings(): Settings {
  const { workflowDir, projectRoot, stateDir: convergeDir, vars } = workflowConfig(NAME, "CONVERGE_DIR", "CONVERGE_CONFIG", ".converge", { MAX_RETRIES: "3" });
  try {
    let task = vars.CONVERGE_TASK ?? "";
    if (vars.CONVERGE_TASK_FILE) {
      const path = resolveFrom(projectRoot, vars.CONVERGE_TASK_FILE);
      if (!existsSync(path)) throw new Error(`task file not found: ${path} (CONVERGE_TASK_FILE)`);
      task = readFileSync(path, "utf8");
    }
    if (task.trim() === "") throw new Error("no task: set CONVERGE_TASK (the task text) or CONVERGE_TASK_FILE (a file, relative to the project root)");
    const gate = vars.CONVERGE_GATE ?? "";
    if (gate.trim() === "") throw new Error("no gate: set CONVERGE_GATE to the command that must pass (for example: npm test)");
    const fallbackType = vars.AGENT_TYPE || "claude";
    const judge = agentSpec(vars, "CONVERGE_JUDGE_", vars.CONVERGE_WORKER_TYPE || fallbackType, true);
    const memory = vars.CONVERGE_MEMORY === "1";
    if (vars.CONVERGE_MILESTONE === "1" && !memory) throw new Error("CONVERGE_MILESTONE=1 needs CONVERGE_MEMORY=1 (the milestone's body is the memory's handoff and log)");
    const step = vars.CONVERGE_PROGRESS_STEP ? Number(vars.CONVERGE_PROGRESS_STEP) : 0.05;
    if (!Number.isFinite(step) || step < 0) throw new Error(`CONVERGE_PROGRESS_STEP must be a non-negative number, got ${JSON.stringify(vars.CONVERGE_PROGRESS_STEP)}`);
    readCaps(vars); // LIMIT_CAP_5H, LIMIT_CAP_7D: a bad value ends the run here, in one line
    return {
      jury: juryOf(vars, judge.type, workflowDir, convergeDir),
      ...(memory ? { ledger: ledgerOf(convergeDir) } : {}),
      milestone: vars.CONVERGE_MILESTONE === "1",
      progressStep: step,
      vars,
      workflowDir,
      projectRoot,
      task: task.trim(),
      gate,
      worker: agentSpec(vars, "CONVERGE_WORKER_", fallbackType),
      // The judge reads and never writes: its CLI's read-only mode, and the tree checked after it.
      judge,
      maxRetries: intVar(vars, "MAX_RETRIES", 3),
      retryBackoffMs: durationVar(vars, "RETRY_BACKOFF", 10_000),
      maxRounds: intVar(vars, "CONVERGE_MAX_ROUNDS", 0),
      idleMs: durationVar(vars, "AGENT_IDLE_TIMEOUT", 20 * 60_000),
      convergeDir,
    };
  } catch (error) {
    fail(NAME, (error as Error).message);
  }
}

function load(tmp: string): State {
  return readState<State>(tmp, STATE) ?? { startedAt: Date.now(), round: 0, rounds: [] };
}

function current(state: State): Round {
  let round = state.rounds.find((r) => r.round === state.round);
  if (!round) state.rounds.push((round = { round: state.round }));
  return round;
}

function history(state: State): string {
  return state.rounds
    .map((r) => `${r.round}: ${r.gate === "failed" ? "gate failed" : r.judge === "approved" ? "approved" : r.judge === "rejected" ? "judge rejected" : "unfinished"}`)
    .join(" · ");
}

function tail(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > FINDINGS_LIMIT ? `…${trimmed.slice(-FINDINGS_LIMIT)}` : trimmed;
}

function firstLine(text: string): string {
  const line = text.trim().split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/** The run's log file, created with the first agent call (logs/ is never committed). */
function logFile(s: Settings, state: State): string {
  return (state.logFile ??= newLogFile(s.convergeDir, "converge"));
}

/**
 * Ctrl-C, SIGTERM (a loopx time limit) or SIGHUP: the agent (its own process group) gets the
 * signal too; once it is gone, one line says where the run stopped, and the script ends 128+N.
 */
let interrupted: NodeJS.Signals | undefined;
function onInterrupt(state: State, where: () => string): void {
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      if (interrupted) return;
      interrupted = signal;
      if (!activeAgent) stopInterrupted(state, where());
    });
  }
}

function stopInterrupted(state: State, where: string): never {
  const limit = interrupted === "SIGTERM" ? timeLimitReached() : undefined;
  const code = limit ? 124 : interrupted === "SIGINT" ? 130 : interrupted === "SIGHUP" ? 129 : 143;
  say(NAME, `${limit ? `timed out by ${limit}` : `interrupted by ${interrupted}`} in round ${state.round} (${where}), ${duration(Date.now() - state.startedAt)}; rounds ${history(state) || "none"}`);
  process.exit(code);
}

async function callAgent(role: string, spec: AgentSpec, prompt: string, s: Settings, state: State, tmp: string, raw = role) {
  if (!which(spec.cli)) fail(NAME, `${role} agent CLI not found on PATH: ${spec.cli} (${spec.prefix}TYPE=${spec.type}; set ${spec.prefix}CLI to override)`);
  const log = logFile(s, state);
  writeState(tmp, STATE, state);
  appendFileSync(log, `=== round ${state.round}: ${role} (${[spec.cli, ...spec.args].join(" ")}) ===\n`);
  const waited = { ms: state.limitWaitMs ?? 0 };
  const result = await runAgentWithRetries(
    spec,
    prompt,
    { cwd: s.projectRoot, logFile: log, rawFile: join(tmp, `last_${raw}_output`), idleMs: s.idleMs },
    {
      maxRetries: s.maxRetries,
      backoffMs: s.retryBackoffMs,
      onFailure: (attempt, failure, stderrTail, waitMs) => {
        if (interrupted) return;
        appendFileSync(log, `Attempt ${attempt} failed: ${failure}\n`);
        say(NAME, `round ${state.round}: ${role} attempt ${attempt} failed: ${failure}${attempt < s.maxRetries ? ` — retrying${retryIn(waitMs)}` : ""}`);
        for (const line of stderrTail) say(NAME, `  ${spec.cli} stderr: ${line}`);
      },
      stopping: () => interrupted !== undefined,
      limits: limitPolicy(NAME, s.vars, spec, waited, (text) => appendFileSync(log, text)),
    },
  );
  state.limitWaitMs = waited.ms;
  state.totalCost = addCost(state.totalCost, result.totalCost);
  writeState(tmp, STATE, state);
  if (interrupted) stopInterrupted(state, `${role} agent`);
  // Paused, resumable (75, EX_TEMPFAIL): a usage limit past MAX_LIMIT_WAIT, the 7 d window over LIMIT_CAP_7D.
  if (result.limitExceeded) fail(NAME, `paused in round ${state.round}: ${result.limitExceeded} — go on with: loopx runs resume ${process.env.LOOPX_RUN_ID || "<run id>"} (exit code 75)`, 75);
  if (result.failure) {
    fail(NAME, `stopped in round ${state.round}: the ${role} agent failed ${result.failures.length} times (MAX_RETRIES=${s.maxRetries}): ${result.failure}`);
  }
  return result;
}

/** Sends findings back to the worker, unless the round cap is reached. */
function backToWorker(s: Settings, state: State, tmp: string, report: string, findings: string): never {
  writeState(tmp, STATE, state);
  if (s.ledger) logRound(s.ledger, `round ${state.round}: ${report}`);
  say(NAME, `round ${state.round}: ${report} — findings go back to the worker`);
  if (s.maxRounds > 0 && state.round >= s.maxRounds) {
    fail(NAME, `not converged after ${state.round} rounds (CONVERGE_MAX_ROUNDS=${s.maxRounds}), ${duration(Date.now() - state.startedAt)}; rounds ${history(state)}; last findings: ${firstLine(findings)}`);
  }
  output({ result: findings, goto: "index" });
}

export async function runWorker(): Promise<void> {
  const s = settings();
  const tmp = runDir(NAME);
  const state = load(tmp);
  const findings = (await input()).trim();
  state.round += 1;
  current(state);
  writeState(tmp, STATE, state);
  onInterrupt(state, () => "worker agent");
  say(NAME, `round ${state.round}: worker (${s.worker.type}: ${[s.worker.cli, ...s.worker.args].join(" ")})`);
  const prompt = substitute(readFileSync(join(s.workflowDir, "WORKER.md"), "utf8"), {
    ...s.vars,
    TASK: s.task,
    GATE: s.gate,
    ROUND: String(state.round),
    FINDINGS: findings === "" ? "" : `## Findings from round ${state.round - 1} — address every one\n\n${findings}\n`,
    MEMORY: s.ledger ? memoryPrompt(s.ledger, s.projectRoot) : "",
  });
  await callAgent("worker", s.worker, prompt, s, state, tmp);
  output({ goto: "gate" });
}

export async function runGate(): Promise<void> {
  const s = settings();
  const tmp = runDir(NAME);
  const state = load(tmp);
  onInterrupt(state, () => "gate");
  say(NAME, `round ${state.round}: gate \`${s.gate}\``);
  // The gate's output streams to stderr as it runs, and is kept for the findings.
  const { code, text } = await new Promise<{ code: number | null; text: string }>((resolveGate) => {
    let text = "";
    const child = spawn("/bin/sh", ["-c", s.gate], { cwd: s.projectRoot, stdio: ["ignore", "pipe", "pipe"] });
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        text += chunk;
        process.stderr.write(chunk);
      });
    }
    child.on("error", (error) => resolveGate({ code: 127, text: error.message }));
    child.on("close", (code) => resolveGate({ code, text }));
  });
  const round = current(state);
  round.gateCode = code;
  if (code === 0) {
    round.gate = "passed";
    writeState(tmp, STATE, state);
    say(NAME, `round ${state.round}: gate passed — asking the judge`);
    output({ result: tail(text), goto: "judge" });
  }
  round.gate = "failed";
  const findings = `The gate \`${s.gate}\` failed (exit code ${code ?? "signal"}). Its output:\n\n${tail(text) || "(no output)"}`;
  backToWorker(s, state, tmp, `gate failed (exit code ${code ?? "signal"})`, findings);
}

const VERDICT = /<verdict>\s*(APPROVE|REJECT)\s*<\/verdict>/gi;

export async function runJudge(): Promise<void> {
  const s = settings();
  const tmp = runDir(NAME);
  const state = load(tmp);
  const gateOutput = (await input()).trim();
  if (s.jury.reviewers.length > 1 || s.jury.reviewers[0]!.name !== "judge" || s.jury.dimensions.length > 0) return runJury(s, state, tmp, gateOutput);
  onInterrupt(state, () => "judge agent");
  say(NAME, `round ${state.round}: judge (${s.judge.type}: ${[s.judge.cli, ...s.judge.args].join(" ")}, fresh context)`);
  const prompt = judgePrompt(readFileSync(join(s.workflowDir, "JUDGE.md"), "utf8"), s, state, gateOutput, "", "");
  const before = treeFingerprint(s.projectRoot, tmp);
  const result = await callAgent("judge", s.judge, prompt, s, state, tmp);
  const changed = before === undefined ? [] : changedSince(s.projectRoot, tmp, before);
  recordVerdicts(s, state, [ballot(s.jury, s.jury.reviewers[0]!, parseReview(result.response), changed)]);
  // The verdict counts only in the judge's own response text (never in an echoed prompt).
  const verdicts = [...result.response.matchAll(VERDICT)].map((m) => m[1]!.toUpperCase());
  const verdict = verdicts[verdicts.length - 1];
  const round = current(state);
  if (changed.length > 0) {
    // A judge that changed files judged its own work, not the worker's: no verdict counts.
    round.judge = "rejected";
    const list = changed.slice(0, 10).join(", ") + (changed.length > 10 ? `, … (${changed.length} in all)` : "");
    backToWorker(
      s,
      state,
      tmp,
      `the judge changed files (${list}): its verdict${verdict ? ` (${verdict})` : ""} does not count`,
      `The independent judge changed files it was only to read (${list}), so the round is not approved. Review those changes: keep what is right, undo the rest.`,
    );
  }
  const cost = state.totalCost !== undefined ? `, total cost ${costText(state.totalCost, usd)}` : "";
  if (verdict === "APPROVE") {
    round.judge = "approved";
    writeState(tmp, STATE, state);
    say(NAME, `round ${state.round}: gate passed, judge approved`);
    converged(s, state, `converged after ${state.round} round${state.round === 1 ? "" : "s"} (${duration(Date.now() - state.startedAt)}${cost}): gate \`${s.gate}\` passed and the judge approved; rounds ${history(state)}`);
  }
  round.judge = "rejected";
  const reasons = result.response.replace(VERDICT, "").trim();
  const findings = verdict
    ? `The independent judge rejected the work:\n\n${tail(reasons) || "(no reasons given)"}`
    : `The independent judge gave no verdict, so the work is not accepted. Its response:\n\n${tail(reasons) || "(empty)"}`;
  backToWorker(s, state, tmp, verdict ? `gate passed, judge rejected: ${firstLine(reasons)}` : "gate passed, judge gave no verdict", findings);
}

/** Each reviewer's verdict as a note in the run's record (`loopx runs show`, the dashboard), and the jury's confidence as progress for loopx's stall sensor. */
function recordVerdicts(s: Settings, state: State, ballots: Ballot[]): void {
  noteVerdicts(`converge round ${state.round}`, { round: state.round }, ballots);
  // The jury's confidence beats its best by CONVERGE_PROGRESS_STEP: progress (judge jitter is not).
  (loopx as { progress?: (value: number, options: { minStep: number }) => boolean }).progress?.(Number(juryConfidence(ballots).toFixed(4)), { minStep: s.progressStep });
}

/** The run converged: the memory's milestone (CONVERGE_MILESTONE=1), the summary line, stop. */
function converged(s: Settings, state: State, line: string): never {
  if (s.ledger) {
    logRound(s.ledger, `round ${state.round}: converged`);
    if (s.milestone) {
      const failed = milestone(s.ledger, s.projectRoot, `round ${state.round}`);
      if (failed) say(NAME, failed);
    }
  }
  say(NAME, line);
  output({ stop: true });
}

/** JUDGE.md filled in for one reviewer of this round: the lone judge, or a juror with its lens and the rubric. */
function judgePrompt(template: string, s: Settings, state: State, gateOutput: string, lens: string, rubric: string): string {
  return substitute(template, {
    ...s.vars,
    TASK: s.task,
    GATE: s.gate,
    ROUND: String(state.round),
    GATE_OUTPUT: gateOutput === "" ? "(no output)" : gateOutput,
    LENS: lens,
    RUBRIC: rubric,
  });
}

/** The jury: every reviewer (at most CONVERGE_JURY_CONCURRENCY at once), then the quorum decides. */
async function runJury(s: Settings, state: State, tmp: string, gateOutput: string): Promise<void> {
  const { jury } = s;
  onInterrupt(state, () => "jury");
  say(NAME, `round ${state.round}: jury of ${jury.reviewers.length} (quorum ${jury.quorum}, ${jury.concurrency} at once): ${jury.reviewers.map((r) => r.name).join(", ")}`);
  const template = readFileSync(join(s.workflowDir, "JUDGE.md"), "utf8");
  const ballots = await castBallots({
    jury,
    vars: s.vars,
    prefix: "CONVERGE_",
    root: s.projectRoot,
    tmp,
    prompt: (lens, rubric) => judgePrompt(template, s, state, gateOutput, lens, rubric),
    call: (role, spec, prompt, raw) => callAgent(role, spec, prompt, s, state, tmp, raw),
    say: (line) => say(NAME, `round ${state.round}: ${line}`),
  });
  recordVerdicts(s, state, ballots);
  const round = current(state);
  const { approved, text } = tally(jury, ballots);
  if (approved) {
    round.judge = "approved";
    writeState(tmp, STATE, state);
    const cost = state.totalCost !== undefined ? `, total cost ${costText(state.totalCost, usd)}` : "";
    converged(s, state, `converged after ${state.round} round${state.round === 1 ? "" : "s"} (${duration(Date.now() - state.startedAt)}${cost}): gate \`${s.gate}\` passed and the jury approved, ${text}; rounds ${history(state)}`);
  }
  round.judge = "rejected";
  const findings = `The jury did not approve the work (${text}). The findings of the reviewers who did not approve:\n\n${juryFindings(ballots, FINDINGS_LIMIT)}`;
  backToWorker(s, state, tmp, `gate passed, jury: ${text}`, findings);
}

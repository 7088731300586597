// The Ralph loop on loopx: one loopx iteration is one Ralph iteration. Each mode is a target
// (ralph:plan, ralph:build, ralph:prompt) that runs the agent once with a fresh context and then
// either prints nothing (the loop resets to the same target: next iteration) or ends the run:
// `stop` (exit 0) on completion, max iterations or budget, or a non-zero exit carrying the Ralph
// exit code (2 plan missing, 3 re-plan, 4 retries exhausted, 6 the agent cannot work: not logged
// in, key refused, its own budget spent — failures.ts policy `stop`; 75 paused, resumable: a usage
// limit past MAX_LIMIT_WAIT or the 7 d window over LIMIT_CAP_7D, `loopx runs resume <id>` goes on;
// loopx itself then exits 1).
import { existsSync, readFileSync, appendFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { output } from "loopx";
import { agentSpec, finalAnswer, signalled, type AgentSpec } from "./shared/agent.ts";
import type { Jury } from "./shared/jury.ts";
import { recordFailure } from "./shared/failure-log.ts";
import { failurePolicies, type FailureClass, type PolicyAction } from "./shared/failures.ts";
import { readCaps } from "./shared/caps.ts";
import { limitPolicy } from "./shared/limits.ts";
import { preflight } from "./shared/preflight.ts";
import { INSTALL } from "./shared/presets/index.ts";
import { activeAgent, retryIn, runAgentWithRetries, type RetriedResult } from "./shared/run-agent.ts";
import { addCost, costText, type Cost } from "./shared/usage.ts";
import { findingsSection, juryLine, missingReviewer, ralphJury, reviewComplete, type CompletionReview } from "./review.ts";
import {
  duration,
  durationVar,
  fail,
  intVar,
  newLogFile,
  numberVar,
  readState,
  resolveFrom,
  runDir,
  say,
  substitute,
  timeLimitReached,
  timestamp,
  usd,
  which,
  workflowConfig,
  writeState,
  type Vars,
} from "./shared/util.ts";

export type Mode = "plan" | "build" | "prompt";

const NAME = "ralph";
const COMPLETE = "<promise>COMPLETE</promise>";
const REPLAN = "<promise>REPLAN</promise>";
const RULE = "=".repeat(80);
const THIN = "-".repeat(80);
const STATE = "ralph-state.json";
/** Paused, resumable (EX_TEMPFAIL): a usage limit past MAX_LIMIT_WAIT, the 7 d window over its cap. */
const PAUSED = 75;

const resumeCommand = (): string => `loopx runs resume ${process.env.LOOPX_RUN_ID || "<run id>"}`;

/** Intra-run state, kept in $LOOPX_TMPDIR between iterations. */
interface State {
  sessionLog: string;
  startedAt: number;
  iteration: number;
  successful: number;
  failed: number;
  /** What this sitting's agent calls reported, by kind (loopx's own totals span resumes). */
  totalCost?: Cost;
  /** Time spent waiting for usage limits (bounded by MAX_LIMIT_WAIT). */
  limitWaitMs?: number;
  /** The jury's findings on a COMPLETE it did not approve, for the next iteration's prompt. */
  juryFindings?: string;
}

interface Settings {
  vars: Vars;
  workflowDir: string;
  projectRoot: string;
  ralphDir: string;
  agent: AgentSpec;
  maxRetries: number;
  /** RETRY_BACKOFF: the first wait between failed attempts (run-agent.ts retryWaitMs). */
  retryBackoffMs: number;
  maxIterations: number;
  budget?: number;
  /** BUDGET_COUNT_ESTIMATES: estimated cost counts against BUDGET_USD too. */
  budgetCountsEstimates: boolean;
  idleMs: number;
  templatePath: string;
  /** The policy per failure class (FAILURE_POLICY_<CLASS>). */
  policies: Record<FailureClass, PolicyAction>;
  /** RALPH_REVIEWERS: the jury that must approve a COMPLETE (review.ts); undefined: none. */
  jury?: Jury;
}

function settings(mode: Mode): Settings {
  const { workflowDir, projectRoot, stateDir: ralphDir, vars } = workflowConfig(NAME, "RALPH_DIR", "RALPH_CONFIG", ".ralph", { SPECS_DIR: "specs", MAX_RETRIES: "3" });
  try {
    let templatePath: string;
    if (mode === "prompt") {
      if (!vars.RALPH_PROMPT_FILE) throw new Error("RALPH_PROMPT_FILE is not set: ralph:prompt reads its prompt from the file it names");
      templatePath = resolveFrom(projectRoot, vars.RALPH_PROMPT_FILE);
    } else {
      const name = `PROMPT_${mode}.md`;
      templatePath = existsSync(join(ralphDir, name)) ? join(ralphDir, name) : join(workflowDir, name);
    }
    const agent = agentSpec(vars, "AGENT_", "claude");
    readCaps(vars); // LIMIT_CAP_5H, LIMIT_CAP_7D: a bad value ends the run here, in one line
    return {
      vars,
      workflowDir,
      projectRoot,
      ralphDir,
      agent,
      maxRetries: intVar(vars, "MAX_RETRIES", 3),
      retryBackoffMs: durationVar(vars, "RETRY_BACKOFF", 10_000),
      maxIterations: intVar(vars, "MAX_ITERATIONS", 0),
      budget: numberVar(vars, "BUDGET_USD"),
      budgetCountsEstimates: intVar(vars, "BUDGET_COUNT_ESTIMATES", 0) > 0,
      idleMs: durationVar(vars, "AGENT_IDLE_TIMEOUT", 20 * 60_000),
      templatePath,
      policies: failurePolicies(vars),
      jury: ralphJury(vars, agent.type, workflowDir, ralphDir),
    };
  } catch (error) {
    fail(NAME, (error as Error).message);
  }
}

function insideGitRepository(dir: string): boolean {
  for (let current = dir; ; current = dirname(current)) {
    if (existsSync(join(current, ".git"))) return true;
    if (dirname(current) === current) return false;
  }
}

/** Initialization (reference: validate prerequisites, then create the session log). */
function initialize(mode: Mode, s: Settings, tmp: string): State {
  if (!insideGitRepository(s.projectRoot)) fail(NAME, `not a git repository: ${s.projectRoot} (the agent commits its work; run git init first)`);
  if (!which(s.agent.cli)) fail(NAME, `agent CLI not found on PATH: ${s.agent.cli} (AGENT_TYPE=${s.agent.type}; install it${s.agent.cli === s.agent.type && INSTALL[s.agent.type] ? `: ${INSTALL[s.agent.type]}` : ""}, or set AGENT_CLI to another command)`);
  if (!existsSync(s.templatePath)) fail(NAME, `prompt file not found: ${s.templatePath}`);
  // Before any work: a CLI that is not logged in ends the run here, in one line (exit code 6).
  const unusable = preflight(s.agent, s.vars, s.projectRoot);
  if (unusable) fail(NAME, `${unusable} (exit code 6)`, 6);
  const noReviewer = s.jury && missingReviewer(s.jury, s.vars);
  if (noReviewer) fail(NAME, noReviewer);
  if (mode === "prompt" && !readFileSync(s.templatePath, "utf8").includes(COMPLETE)) {
    fail(NAME, `prompt file ${s.templatePath} does not contain ${COMPLETE}: the loop could never end cleanly`);
  }
  const sessionLog = newLogFile(s.ralphDir, "session");
  const state: State = { sessionLog, startedAt: Date.now(), iteration: 0, successful: 0, failed: 0 };
  writeState(tmp, STATE, state);
  say(NAME, `${mode} mode, agent ${s.agent.type} (${[s.agent.cli, ...s.agent.args].join(" ")}), session log ${relative(s.projectRoot, state.sessionLog)}`);
  if (s.jury) say(NAME, juryLine(s.jury));
  // Said once, at the start: a budget that can never trigger must not look like a safeguard.
  if (s.budget !== undefined && s.agent.type === "codex" && !s.agent.usageCmd) {
    say(NAME, `BUDGET_USD=${s.budget} does not apply: codex reports tokens, not cost (loopx run --max-tokens budgets them)`);
  } else if (s.budget !== undefined) {
    const counted = s.budgetCountsEstimates ? "billed and estimated cost" : "billed cost; estimates too with BUDGET_COUNT_ESTIMATES=1";
    say(NAME, `BUDGET_USD=${s.budget} is ralph's own cap for this sitting (${counted}); loopx run --max-cost is loopx's budget for the whole run`);
  }
  return state;
}

function log(state: State, text: string): void {
  appendFileSync(state.sessionLog, text);
}

/** Writes the session summary, prints the reason as the last stderr line, and ends the run. */
function finish(state: State, tmp: string, reason: string, code: number): never {
  const lines = [
    RULE,
    "SESSION SUMMARY",
    RULE,
    `Total Iterations: ${state.iteration}`,
    `Successful: ${state.successful}`,
    `Failed: ${state.failed}`,
    `Total Duration: ${duration(Date.now() - state.startedAt)}`,
    ...(state.totalCost !== undefined ? [`Total Cost: ${costText(state.totalCost, usd)}`] : []),
    `Exit Reason: ${reason}`,
    `Exit Code: ${code}`,
    RULE,
    "",
  ];
  log(state, lines.join("\n"));
  writeState(tmp, STATE, state);
  const where = `session log: ${relative(process.env.LOOPX_PROJECT_ROOT ?? process.cwd(), state.sessionLog)}`;
  if (code === 0) {
    say(NAME, `${reason} (${where})`);
    output({ stop: true });
  }
  say(NAME, `${reason} (exit code ${code}; ${where})`);
  process.exit(code);
}

export async function runRalph(mode: Mode): Promise<void> {
  const s = settings(mode);
  const tmp = runDir(NAME);
  const state = readState<State>(tmp, STATE) ?? initialize(mode, s, tmp);

  // Ctrl-C / SIGTERM / SIGHUP reach this script's process group; the agent, in a group of its own,
  // gets them passed on (run-agent.ts). Let the agent die, then close the iteration and the
  // session in the log before exiting 128+N (124 at a loopx time limit).
  let interrupted: NodeJS.Signals | undefined;
  let inIteration = false;
  let iterationStart = Date.now();
  let iterationCost: Cost | undefined;
  const closeInterrupted = (): never => {
    const signal = interrupted!;
    if (inIteration) {
      // What the interrupted iteration's agent calls reported still counts in the totals.
      state.totalCost = addCost(state.totalCost, iterationCost);
      const cost = iterationCost !== undefined ? [`Iteration Cost: ${costText(iterationCost, usd)}`] : [];
      log(state, [THIN, `ITERATION ${state.iteration} COMPLETE`, `End Time: ${timestamp()}`, `Duration: ${duration(Date.now() - iterationStart)}`, ...cost, `Status: ${signal === "SIGTERM" && timeLimitReached() ? "timed-out" : "interrupted"}`, RULE, "", ""].join("\n"));
      state.failed += 1;
    }
    const limit = signal === "SIGTERM" ? timeLimitReached() : undefined;
    if (limit) finish(state, tmp, `Timed out by ${limit}`, 124);
    finish(state, tmp, `Interrupted by ${signal}`, signal === "SIGINT" ? 130 : signal === "SIGHUP" ? 129 : 143);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      if (interrupted) return;
      interrupted = signal;
      if (!activeAgent) closeInterrupted();
    });
  }

  // Pre-iteration checks (build mode only).
  if (mode === "build" && !existsSync(join(s.ralphDir, "implementation_plan.md"))) {
    finish(state, tmp, "Implementation plan not found. Run 'loopx run ralph:plan' first.", 2);
  }

  state.iteration += 1;
  writeState(tmp, STATE, state);
  iterationStart = Date.now();
  inIteration = true;
  log(state, [RULE, `ITERATION ${state.iteration}`, RULE, `Mode: ${mode}`, `Start Time: ${timestamp(new Date(iterationStart))}`, THIN, ""].join("\n"));

  const templateVars: Vars = {
    ...s.vars,
    MODE: mode,
    ITERATION: String(state.iteration),
    RALPH_DIR: relative(s.projectRoot, s.ralphDir) || ".",
    PLAN_FILE: relative(s.projectRoot, join(s.ralphDir, "implementation_plan.md")),
  };
  const prompt = substitute(readFileSync(s.templatePath, "utf8"), templateVars);
  say(NAME, `iteration ${state.iteration} (${mode})`);

  // A COMPLETE the jury did not approve last iteration: its findings come after the template's prompt.
  const agentPrompt = state.juryFindings ? `${prompt}\n${state.juryFindings}` : prompt;
  const waited = { ms: state.limitWaitMs ?? 0 };
  const call = (spec: AgentSpec, text: string, raw: string, who = "") =>
    runAgentWithRetries(
      spec,
      text,
      { cwd: s.projectRoot, logFile: state.sessionLog, rawFile: join(tmp, raw), idleMs: s.idleMs },
      {
        maxRetries: s.maxRetries,
        backoffMs: s.retryBackoffMs,
        onFailure: (attempt, failure, stderrTail, waitMs) => {
          if (interrupted) return;
          log(state, `${who}Attempt ${attempt} failed: ${failure}\n`);
          say(NAME, `${who}attempt ${attempt} failed: ${failure}${attempt < s.maxRetries ? ` — retrying${retryIn(waitMs)}` : ""}`);
          for (const line of stderrTail) say(NAME, `  ${spec.cli} stderr: ${line}`);
        },
        stopping: () => interrupted !== undefined,
        policies: s.policies,
        // An agent ended because loopx is ending the run (Ctrl-C, --timeout) did not fail: nothing to classify.
        onClassified: (attempt, failure, action, waitMs, final) => interrupted === undefined && recordFailure(NAME, attempt, failure, action, waitMs, final === true, (text) => log(state, text)),
        limits: limitPolicy(NAME, s.vars, spec, waited, (text) => log(state, text)),
      },
    );
  const result = await call(s.agent, agentPrompt, "last_agent_output");
  iterationCost = result.totalCost;
  state.limitWaitMs = waited.ms;
  if (interrupted) closeInterrupted();

  // The signals count only in the agent's final answer, each on a line of its own.
  const answer = finalAnswer(s.agent.type, result.events);
  const complete = !result.failure && signalled(answer, COMPLETE);
  const replan = !result.failure && !complete && signalled(answer, REPLAN);
  delete state.juryFindings;
  // RALPH_REVIEWERS: a COMPLETE counts only when the jury's quorum approves (review.ts). A reviewer
  // whose call fails as the agent's would (retries spent, a usage limit, policy stop) ends the run so.
  let review: CompletionReview | undefined;
  let reviewerFailed: { role: string; result: RetriedResult } | undefined;
  if (complete && s.jury) {
    const reviewer = async (role: string, spec: AgentSpec, text: string, raw: string) => {
      log(state, `${THIN}\n${role} (${[spec.cli, ...spec.args].join(" ")})\n`);
      const r = await call(spec, text, `last_${raw}_output`, `${role}: `);
      iterationCost = addCost(iterationCost, r.totalCost);
      state.limitWaitMs = waited.ms;
      if (interrupted) closeInterrupted();
      if (r.failure || r.limitExceeded) {
        reviewerFailed ??= { role, result: r };
        throw new Error(`${role}: ${r.limitExceeded ?? r.failure}`);
      }
      return r;
    };
    try {
      review = await reviewComplete({ jury: s.jury, vars: templateVars, workflowDir: s.workflowDir, ralphDir: s.ralphDir, projectRoot: s.projectRoot, tmp, iteration: state.iteration, agentPrompt: prompt, call: reviewer });
    } catch (error) {
      if (!reviewerFailed) throw error;
    }
    if (review && !review.approved) state.juryFindings = findingsSection(state.iteration, review);
  }
  // The call whose failure ends the iteration: the agent's, or a reviewer's.
  const ended = reviewerFailed?.result ?? result;
  const status = ended.limitExceeded ? "limit" : ended.failure ? "failed" : review && !review.approved ? "rejected" : complete ? "complete" : replan ? "replan" : "success";
  state.totalCost = addCost(state.totalCost, iterationCost);
  log(
    state,
    [
      THIN,
      `ITERATION ${state.iteration} COMPLETE`,
      `End Time: ${timestamp()}`,
      `Duration: ${duration(Date.now() - iterationStart)}`,
      ...(iterationCost !== undefined ? [`Iteration Cost: ${costText(iterationCost, usd)}`] : []),
      ...(result.balance !== undefined ? [`Balance: ${usd(result.balance)}`] : []),
      `Status: ${status}`,
      ...(review ? [`Jury: ${review.tally}`] : []),
      `Retries: ${result.retries}`,
      ...(ended.failureClass ? [`Failure Class: ${ended.failureClass.class} (${ended.failureClass.evidence})`] : []),
      RULE,
      "",
      "",
    ].join("\n"),
  );
  inIteration = false;
  if (ended.failure) state.failed += 1;
  else state.successful += 1;
  writeState(tmp, STATE, state);
  const cost = iterationCost !== undefined ? `, cost ${costText(iterationCost, usd)}${state.totalCost !== undefined ? ` (total ${costText(state.totalCost, usd)})` : ""}` : "";
  say(NAME, `iteration ${state.iteration} ${status}${cost}`);

  const who = reviewerFailed ? `${reviewerFailed.role[0]!.toUpperCase()}${reviewerFailed.role.slice(1)}` : "Agent";
  if (ended.limitExceeded) finish(state, tmp, `Paused${reviewerFailed ? ` (${reviewerFailed.role})` : ""}: ${ended.limitExceeded} — go on with: ${resumeCommand()}`, PAUSED);
  if (ended.stopped) finish(state, tmp, `${who} unusable (${ended.stopped.class}, policy stop, no retry): ${ended.failure}`, 6);
  if (ended.failure) finish(state, tmp, `${who} failure exceeded retries (${ended.failures.length} failed attempts, MAX_RETRIES=${s.maxRetries}): ${ended.failure}`, 4);
  if (complete && (!review || review.approved)) finish(state, tmp, review ? `Completion signal detected and approved by the jury (${review.tally})` : "Completion signal detected", 0);
  if (replan) finish(state, tmp, "Agent requested re-planning. Run 'loopx run ralph:plan' to regenerate the implementation plan.", 3);
  const counted = (state.totalCost?.billed ?? 0) + (s.budgetCountsEstimates ? (state.totalCost?.estimate ?? 0) : 0);
  if (s.budget !== undefined && counted >= s.budget) {
    finish(state, tmp, `Budget exceeded: ${usd(counted)} ${s.budgetCountsEstimates ? "billed and estimated" : "billed"} in this sitting, BUDGET_USD=${s.budget}`, 0);
  }
  if (s.maxIterations > 0 && state.iteration >= s.maxIterations) finish(state, tmp, `Max iterations reached (MAX_ITERATIONS=${s.maxIterations})`, 0);
  // No output: the loop resets to this same target for the next iteration.
}

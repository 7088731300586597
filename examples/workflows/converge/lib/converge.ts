// The convergence gate on loopx. A round is three scripts:
//   converge:index (worker agent) → converge:gate (CONVERGE_GATE) → converge:judge (judge agent)
// A failing gate or a rejecting judge sends its findings back to the worker as `result` (goto
// index); an approving judge stops the loop. "Done" means the gate passed AND the independent
// judge agreed — never that the worker said so.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { input, output } from "loopx";
import { agentSpec, runAgentWithRetries, type AgentSpec } from "./shared/agent.ts";
import { duration, fail, intVar, readKeyValueFile, readState, resolveFrom, runDir, say, substitute, which, writeState, type Vars } from "./shared/util.ts";

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
  totalCost?: number;
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
  maxRounds: number;
}

function settings(): Settings {
  const workflowDir = process.cwd();
  const projectRoot = process.env.LOOPX_PROJECT_ROOT ?? workflowDir;
  const vars: Vars = { MAX_RETRIES: "3", ...readKeyValueFile(join(workflowDir, "config")), ...process.env };
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
    return {
      vars,
      workflowDir,
      projectRoot,
      task: task.trim(),
      gate,
      worker: agentSpec(vars, "CONVERGE_WORKER_", fallbackType),
      judge: agentSpec(vars, "CONVERGE_JUDGE_", vars.CONVERGE_WORKER_TYPE || fallbackType),
      maxRetries: intVar(vars, "MAX_RETRIES", 3),
      maxRounds: intVar(vars, "CONVERGE_MAX_ROUNDS", 0),
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

async function callAgent(role: "worker" | "judge", spec: AgentSpec, prompt: string, s: Settings, state: State, tmp: string) {
  if (!which(spec.cli)) fail(NAME, `${role} agent CLI not found on PATH: ${spec.cli} (CONVERGE_${role.toUpperCase()}_TYPE=${spec.type}; set CONVERGE_${role.toUpperCase()}_CLI to override)`);
  const result = await runAgentWithRetries(spec, prompt, { cwd: s.projectRoot, rawFile: join(tmp, `last_${role}_output`) }, s.maxRetries, (attempt, failure) =>
    say(NAME, `round ${state.round}: ${role} attempt ${attempt} failed: ${failure}${attempt < s.maxRetries ? " — retrying" : ""}`),
  );
  if (result.totalCost !== undefined) state.totalCost = (state.totalCost ?? 0) + result.totalCost;
  writeState(tmp, STATE, state);
  if (result.failure) {
    fail(NAME, `stopped in round ${state.round}: the ${role} agent failed ${result.failures.length} times (MAX_RETRIES=${s.maxRetries}): ${result.failure}`);
  }
  return result;
}

/** Sends findings back to the worker, unless the round cap is reached. */
function backToWorker(s: Settings, state: State, tmp: string, report: string, findings: string): never {
  writeState(tmp, STATE, state);
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
  say(NAME, `round ${state.round}: worker (${s.worker.type}: ${[s.worker.cli, ...s.worker.args].join(" ")})`);
  const prompt = substitute(readFileSync(join(s.workflowDir, "WORKER.md"), "utf8"), {
    ...s.vars,
    TASK: s.task,
    GATE: s.gate,
    ROUND: String(state.round),
    FINDINGS: findings === "" ? "" : `## Findings from round ${state.round - 1} — address every one\n\n${findings}\n`,
  });
  await callAgent("worker", s.worker, prompt, s, state, tmp);
  output({ goto: "gate" });
}

export async function runGate(): Promise<void> {
  const s = settings();
  const tmp = runDir(NAME);
  const state = load(tmp);
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
  say(NAME, `round ${state.round}: judge (${s.judge.type}: ${[s.judge.cli, ...s.judge.args].join(" ")}, fresh context)`);
  const prompt = substitute(readFileSync(join(s.workflowDir, "JUDGE.md"), "utf8"), {
    ...s.vars,
    TASK: s.task,
    GATE: s.gate,
    ROUND: String(state.round),
    GATE_OUTPUT: gateOutput === "" ? "(no output)" : gateOutput,
  });
  const result = await callAgent("judge", s.judge, prompt, s, state, tmp);
  // The verdict counts only in the judge's own response text (never in an echoed prompt).
  const verdicts = [...result.response.matchAll(VERDICT)].map((m) => m[1]!.toUpperCase());
  const verdict = verdicts[verdicts.length - 1];
  const round = current(state);
  const cost = state.totalCost !== undefined ? `, total cost $${state.totalCost.toFixed(6)}` : "";
  if (verdict === "APPROVE") {
    round.judge = "approved";
    writeState(tmp, STATE, state);
    say(NAME, `round ${state.round}: gate passed, judge approved`);
    say(NAME, `converged after ${state.round} round${state.round === 1 ? "" : "s"} (${duration(Date.now() - state.startedAt)}${cost}): gate \`${s.gate}\` passed and the judge approved; rounds ${history(state)}`);
    output({ stop: true });
  }
  round.judge = "rejected";
  const reasons = result.response.replace(VERDICT, "").trim();
  const findings = verdict
    ? `The independent judge rejected the work:\n\n${tail(reasons) || "(no reasons given)"}`
    : `The independent judge gave no verdict, so the work is not accepted. Its response:\n\n${tail(reasons) || "(empty)"}`;
  backToWorker(s, state, tmp, verdict ? `gate passed, judge rejected: ${firstLine(reasons)}` : "gate passed, judge gave no verdict", findings);
}

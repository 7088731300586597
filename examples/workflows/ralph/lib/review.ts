// ralph's completion check by a jury (opt-in: RALPH_REVIEWERS). When the agent signals COMPLETE,
// each reviewer — a fresh read-only call of its CLI, with its model and lens — reads the
// repository against REVIEW.md (the agent's instructions, the plan, the specs); a quorum of
// RALPH_QUORUM must approve for the run to end. Otherwise the rejecting reviewers' findings go
// into the next iteration's prompt and the loop goes on. The jury is converge's (shared/jury.ts,
// shared/review.ts), its settings read with the prefix RALPH_.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentSpec, AgentType } from "./shared/agent.ts";
import { juryFindings, juryOf, type Jury } from "./shared/jury.ts";
import { castBallots, noteVerdicts, reviewerSpec, tally } from "./shared/review.ts";
import { say, substitute, which, type Vars } from "./shared/util.ts";

const NAME = "ralph";
const PREFIX = "RALPH_";
/** The findings handed to the next iteration, at most (as converge's). */
const FINDINGS_LIMIT = 4000;

/** The jury of RALPH_REVIEWERS; undefined (no completion check) when it is unset or empty. */
export function ralphJury(vars: Vars, agentType: AgentType, workflowDir: string, ralphDir: string): Jury | undefined {
  if ((vars[`${PREFIX}REVIEWERS`] ?? "").trim() === "") return undefined;
  return juryOf(vars, agentType, workflowDir, ralphDir, PREFIX);
}

/** Why the jury cannot run: a reviewer's CLI not on PATH (ralph then ends, exit 1). */
export function missingReviewer(jury: Jury, vars: Vars): string | undefined {
  for (const reviewer of jury.reviewers) {
    const spec = reviewerSpec(vars, PREFIX, reviewer);
    if (!which(spec.cli)) return `reviewer CLI not found on PATH: ${spec.cli} (${reviewer.name} in ${PREFIX}REVIEWERS; set ${spec.prefix}CLI to another command)`;
  }
  return undefined;
}

/** Said once at the start of a run with a jury: who checks a COMPLETE, and what it costs. */
export function juryLine(jury: Jury): string {
  const n = jury.reviewers.length;
  return `completion check: a COMPLETE counts when ${jury.quorum} of ${n} reviewer${n === 1 ? "" : "s"} approve (${jury.reviewers.map((r) => r.name).join(", ")}): ${n} more read-only call${n === 1 ? "" : "s"} per COMPLETE`;
}

export interface CompletionReview {
  approved: boolean;
  /** "1 of 2 approved (quorum 2)". */
  tally: string;
  /** For the next iteration's prompt when not approved ("" when approved). */
  findings: string;
}

export interface ReviewContext {
  jury: Jury;
  /** The template variables of the iteration (MODE, ITERATION, PLAN_FILE, … and every setting). */
  vars: Vars;
  workflowDir: string;
  ralphDir: string;
  projectRoot: string;
  tmp: string;
  iteration: number;
  /** The prompt the agent worked on. */
  agentPrompt: string;
  call: (role: string, spec: AgentSpec, prompt: string, raw: string) => Promise<{ response: string }>;
}

/** The jury on a COMPLETE: every reviewer, each verdict a note, then the quorum decides. */
export async function reviewComplete(c: ReviewContext): Promise<CompletionReview> {
  const { jury } = c;
  say(NAME, `iteration ${c.iteration}: COMPLETE signalled — asking the jury of ${jury.reviewers.length} (quorum ${jury.quorum}, ${jury.concurrency} at once)`);
  const own = join(c.ralphDir, "REVIEW.md");
  const template = readFileSync(existsSync(own) ? own : join(c.workflowDir, "REVIEW.md"), "utf8");
  const ballots = await castBallots({
    jury,
    vars: c.vars,
    prefix: PREFIX,
    root: c.projectRoot,
    tmp: c.tmp,
    prompt: (lens, rubric) => substitute(template, { ...c.vars, LENS: lens, RUBRIC: rubric, INSTRUCTIONS: c.agentPrompt.trim() }),
    call: c.call,
    say: (line) => say(NAME, `iteration ${c.iteration}: ${line}`),
  });
  noteVerdicts(`ralph iteration ${c.iteration}`, { iteration: c.iteration }, ballots);
  const { approved, text } = tally(jury, ballots);
  say(NAME, `iteration ${c.iteration}: jury: ${text}${approved ? "" : " — not complete; the findings go into the next iteration"}`);
  return { approved, tally: text, findings: approved ? "" : juryFindings(ballots, FINDINGS_LIMIT) };
}

/** What the next iteration's prompt gets after a COMPLETE the jury did not approve. */
export function findingsSection(iteration: number, review: CompletionReview): string {
  return [
    `## Your COMPLETE in iteration ${iteration} was not accepted`,
    "",
    `Independent reviewers checked the repository and did not approve (${review.tally}). Address every finding below; signal COMPLETE again only when the work is really complete.`,
    "",
    review.findings,
    "",
  ].join("\n");
}

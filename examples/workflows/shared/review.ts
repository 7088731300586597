// Running a jury (jury.ts): each reviewer a fresh call of its CLI in its read-only mode, the
// working tree compared before and after it (a reviewer that changed files does not approve), at
// most <prefix>JURY_CONCURRENCY at once; each verdict a note in the run's record. The agent call
// itself is the workflow's (its retries, limits, logs and interruption), passed in as `call`.
// Shared by converge (its gate's jury) and ralph (RALPH_REVIEWERS: the check of a COMPLETE).
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import * as loopx from "loopx";
import { agentSpec, type AgentSpec } from "./agent.ts";
import { ballot, lensText, parseReview, type Ballot, type Jury, type Reviewer } from "./jury.ts";
import type { Vars } from "./util.ts";

/**
 * The working tree's content as a git tree id (tracked and untracked files, ignored ones left
 * out), through a scratch index so the user's index is untouched; undefined outside a git
 * repository.
 */
export function treeFingerprint(root: string, tmp: string, tag = ""): string | undefined {
  const index = join(tmp, `judge-check${tag}.index`);
  rmSync(index, { force: true });
  const env = { ...process.env, GIT_INDEX_FILE: index };
  const add = spawnSync("git", ["add", "-A", "."], { cwd: root, env, stdio: "ignore" });
  if (add.status !== 0) return undefined;
  const tree = spawnSync("git", ["write-tree"], { cwd: root, env, encoding: "utf8" });
  return tree.status === 0 ? tree.stdout.trim() : undefined;
}

/** The files (relative to the project root) that differ from the tree `before`. */
export function changedSince(root: string, tmp: string, before: string, tag = ""): string[] {
  const after = treeFingerprint(root, tmp, tag);
  if (after === undefined || after === before) return [];
  const diff = spawnSync("git", ["diff-tree", "-r", "--name-status", "--no-renames", before, after], { cwd: root, encoding: "utf8" });
  const lines = diff.stdout.trim().split("\n").filter(Boolean);
  return lines.length ? lines.map((line) => line.replace(/\t/, " ")) : ["(the tree changed: .)"];
}

/** The spec a reviewer runs with: its type's read-only preset (<prefix>REVIEWER_<TYPE>_* settings), its model. */
export function reviewerSpec(vars: Vars, prefix: string, reviewer: Reviewer): AgentSpec {
  const own = `${prefix}REVIEWER_${reviewer.type.toUpperCase()}_`;
  const spec = agentSpec({ ...vars, [`${own}TYPE`]: reviewer.type }, own, reviewer.type, true);
  return reviewer.model ? { ...spec, args: [...spec.args, "--model", reviewer.model] } : spec;
}

/** What a juror is asked beyond its verdict: its confidence, and a score per rubric dimension. */
export function rubricText(dimensions: string[]): string {
  return [
    "",
    "Give your confidence in your verdict as `<confidence>N%</confidence>`.",
    ...(dimensions.length ? ['Score each of these dimensions from 0 to 1, one line each, as `<score dimension="name">0.8</score>`:', ...dimensions.map((d) => `- ${d}`)] : []),
    "",
  ].join("\n");
}

export interface JuryCall {
  jury: Jury;
  /** The workflow's settings, and the prefix its reviewers' are read with (CONVERGE_, RALPH_). */
  vars: Vars;
  prefix: string;
  root: string;
  tmp: string;
  /** One reviewer's prompt, given its lens section ("" without a lens) and the rubric's text. */
  prompt: (lens: string, rubric: string) => string;
  /** The workflow's agent call: `role` names the reviewer in logs, `raw` its raw-output file. */
  call: (role: string, spec: AgentSpec, prompt: string, raw: string) => Promise<{ response: string }>;
  /** One line per reviewer as its ballot is cast. */
  say: (line: string) => void;
}

/** Every reviewer (at most jury.concurrency at once), each a ballot, in the reviewers' order. */
export async function castBallots(c: JuryCall): Promise<Ballot[]> {
  const { jury } = c;
  const ballots: Ballot[] = new Array(jury.reviewers.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < jury.reviewers.length; i = next++) {
      const reviewer = jury.reviewers[i]!;
      const lens = reviewer.lens ? `\n## Your lens\n\n${lensText(jury, reviewer.lens)}\n` : "";
      const before = treeFingerprint(c.root, c.tmp, `r${i}`);
      const result = await c.call(`reviewer ${reviewer.name}`, reviewerSpec(c.vars, c.prefix, reviewer), c.prompt(lens, rubricText(jury.dimensions)), `reviewer${i}`);
      const changed = before === undefined ? [] : changedSince(c.root, c.tmp, before, `r${i}`);
      const cast = (ballots[i] = ballot(jury, reviewer, parseReview(result.response), changed));
      c.say(`${reviewer.name}: ${cast.approves ? "approves" : `does not approve (${cast.why})`}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jury.concurrency, jury.reviewers.length) }, worker));
  return ballots;
}

/** "2 of 3 approved (quorum 2)", and whether the quorum is reached. */
export function tally(jury: Jury, ballots: Ballot[]): { approved: boolean; text: string } {
  const approvals = ballots.filter((b) => b.approves).length;
  return { approved: approvals >= jury.quorum, text: `${approvals} of ${jury.reviewers.length} approved (quorum ${jury.quorum})` };
}

/** Each reviewer's verdict as a note in the run's record (`loopx runs show`, the dashboard): `where` heads its text ("converge round 2"), `at` goes into its data ({ round: 2 }). */
export function noteVerdicts(where: string, at: Record<string, number>, ballots: Ballot[]): void {
  for (const b of ballots) {
    const { review, reviewer } = b;
    const confidence = review.confidence !== undefined ? `, confidence ${Math.round(review.confidence * 100)}%` : "";
    loopx.note(`${where}: ${reviewer.name}: ${b.approves ? "approves" : `does not approve (${b.why ?? "rejected"})`}${confidence}`, {
      ...at,
      reviewer: reviewer.name,
      type: reviewer.type,
      ...(reviewer.model ? { model: reviewer.model } : {}),
      ...(reviewer.lens ? { lens: reviewer.lens } : {}),
      verdict: review.verdict ?? null,
      approves: b.approves,
      ...(review.confidence !== undefined ? { confidence: review.confidence } : {}),
      scores: review.scores,
      ...(b.mean !== undefined ? { mean: Number(b.mean.toFixed(4)) } : {}),
      ...(b.changed.length ? { changed: b.changed.slice(0, 20) } : {}),
      findings: review.findings.slice(0, 1500),
    });
  }
}

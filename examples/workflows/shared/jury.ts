// A jury of reviewers: converge's gate once the gate command passed, and ralph's check of a
// COMPLETE signal (RALPH_REVIEWERS, opt-in). Each reviewer is a fresh read-only agent call with its
// own agent type, model and lens (a Markdown persona, lenses/), a quorum of k of n decides, and a
// rubric's dimensions count on their geometric mean. Pure, apart from reading lens files; running
// the reviewers is review.ts. Settings are read with the workflow's prefix (CONVERGE_, RALPH_).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AGENT_TYPES, type AgentType } from "./agent.ts";
import type { Vars } from "./util.ts";

/** One reviewer as configured: `type[:model[:lens]]` in CONVERGE_REVIEWERS (RALPH_REVIEWERS). */
export interface Reviewer {
  type: AgentType;
  model?: string;
  lens?: string;
  /** "correctness (claude, sonnet)": how lines and findings name it. */
  name: string;
}

export interface Jury {
  reviewers: Reviewer[];
  /** How many must approve. */
  quorum: number;
  /** Reviewers called at once. */
  concurrency: number;
  /** Rubric dimensions (empty: none) and the threshold on their geometric mean. */
  dimensions: string[];
  threshold: number;
  /** The settings directory's lenses/, then the shipped ones (a user's lens of the same name wins). */
  lensDirs: string[];
}

/** What one reviewer said, read from its response. */
export interface Review {
  verdict?: "APPROVE" | "REJECT";
  /** 0–1, from `<confidence>N%</confidence>`. */
  confidence?: number;
  /** Per rubric dimension, 0–1, from `<score dimension="…">x</score>` (a percentage is read as such). */
  scores: Record<string, number>;
  /** The response without its tags: the reviewer's findings. */
  findings: string;
}

/** How one reviewer's review counts. */
export interface Ballot {
  reviewer: Reviewer;
  review: Review;
  approves: boolean;
  /** Why it does not approve, when it does not. */
  why?: string;
  /** The geometric mean of its scores, with a rubric. */
  mean?: number;
  /** Files it changed (or that changed while it ran). */
  changed: string[];
}

function describeReviewer(type: AgentType, model: string | undefined, lens: string | undefined): string {
  const who = model ? `${type}, ${model}` : type;
  return lens ? `${lens} (${who})` : who;
}

/** CONVERGE_REVIEWERS (`variable`): space-separated `type[:model[:lens]]`; empty: one reviewer, the judge of CONVERGE_JUDGE_TYPE. */
export function parseReviewers(text: string | undefined, judgeType: AgentType, variable = "CONVERGE_REVIEWERS"): Reviewer[] {
  const words = (text ?? "").trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [{ type: judgeType, name: "judge" }];
  return words.map((word) => {
    const [type = "", model = "", lens = ""] = word.split(":");
    if (!AGENT_TYPES.includes(type as AgentType)) throw new Error(`${variable}: ${JSON.stringify(word)}: the agent type must be one of ${AGENT_TYPES.join(", ")}`);
    if (lens !== "" && !/^[A-Za-z0-9_.-]+$/.test(lens)) throw new Error(`${variable}: ${JSON.stringify(word)}: a lens is a name (letters, digits, . _ -)`);
    return { type: type as AgentType, ...(model ? { model } : {}), ...(lens ? { lens } : {}), name: describeReviewer(type as AgentType, model || undefined, lens || undefined) };
  });
}

function positiveInt(vars: Vars, name: string, fallback: number): number {
  const text = vars[name];
  if (text === undefined || text === "") return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** Where the shipped lenses are: the workflow's copy of shared/ (in the checkout, a link to it). */
const shippedLenses = (workflowDir: string): string => join(workflowDir, "lib", "shared", "lenses");

/**
 * The jury of a run, from its settings read with `prefix` (CONVERGE_ or RALPH_): <prefix>REVIEWERS,
 * QUORUM, JURY_CONCURRENCY, RUBRIC, RUBRIC_THRESHOLD; the user's lenses in `<stateDir>/lenses/`.
 */
export function juryOf(vars: Vars, judgeType: AgentType, workflowDir: string, stateDir: string, prefix = "CONVERGE_"): Jury {
  const reviewers = parseReviewers(vars[`${prefix}REVIEWERS`], judgeType, `${prefix}REVIEWERS`);
  const quorum = positiveInt(vars, `${prefix}QUORUM`, Math.floor(reviewers.length / 2) + 1);
  if (quorum > reviewers.length) throw new Error(`${prefix}QUORUM=${quorum} is more than the ${reviewers.length} reviewer${reviewers.length === 1 ? "" : "s"} of ${prefix}REVIEWERS`);
  const dimensions = (vars[`${prefix}RUBRIC`] ?? "")
    .split(",")
    .map((d) => d.trim())
    .filter(Boolean);
  const thresholdText = vars[`${prefix}RUBRIC_THRESHOLD`];
  const threshold = thresholdText ? Number(thresholdText) : 0.7;
  if (!Number.isFinite(threshold) || threshold < 0 || threshold > 1) throw new Error(`${prefix}RUBRIC_THRESHOLD must be a number from 0 to 1, got ${JSON.stringify(thresholdText)}`);
  const lensDirs = [join(stateDir, "lenses"), shippedLenses(workflowDir)];
  const jury = { reviewers, quorum, concurrency: positiveInt(vars, `${prefix}JURY_CONCURRENCY`, 3), dimensions, threshold, lensDirs };
  for (const reviewer of reviewers) if (reviewer.lens) lensText(jury, reviewer.lens);
  return jury;
}

/** A lens's persona: the user's `<settings dir>/lenses/<name>.md` (.converge/, .ralph/), else the shipped one. */
export function lensText(jury: Pick<Jury, "lensDirs">, lens: string): string {
  for (const dir of jury.lensDirs) {
    const path = join(dir, `${lens}.md`);
    if (existsSync(path)) return readFileSync(path, "utf8").trim();
  }
  const known = new Set(jury.lensDirs.flatMap((dir) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".md")).map((f) => f.slice(0, -3)) : [])));
  throw new Error(`no lens ${JSON.stringify(lens)}: add ${join(jury.lensDirs[0]!, `${lens}.md`)} (lenses: ${[...known].sort().join(", ") || "none"})`);
}

const VERDICT = /<verdict>\s*(APPROVE|REJECT)\s*<\/verdict>/gi;
const CONFIDENCE = /<confidence>\s*([\d.]+)\s*(%?)\s*<\/confidence>/gi;
const SCORE = /<score\s+dimension\s*=\s*"([^"]+)"\s*>\s*([\d.]+)\s*(%?)\s*<\/score>/gi;

const fraction = (value: string, percent: string) => Math.min(1, Math.max(0, Number(value) / (percent || Number(value) > 1 ? 100 : 1)));

/** A reviewer's response, read: the last verdict, confidence and score of each dimension count. */
export function parseReview(response: string): Review {
  const verdicts = [...response.matchAll(VERDICT)].map((m) => m[1]!.toUpperCase() as "APPROVE" | "REJECT");
  const confidences = [...response.matchAll(CONFIDENCE)].map((m) => fraction(m[1]!, m[2]!));
  const scores: Record<string, number> = {};
  for (const m of response.matchAll(SCORE)) scores[m[1]!.trim().toLowerCase()] = fraction(m[2]!, m[3]!);
  const findings = response.replace(VERDICT, "").replace(CONFIDENCE, "").replace(SCORE, "").trim();
  return { ...(verdicts.length ? { verdict: verdicts.at(-1)! } : {}), ...(confidences.length ? { confidence: confidences.at(-1)! } : {}), scores, findings };
}

/** The geometric mean: one low value sinks it (a dimension scored 0, or not scored, makes it 0). */
export function geometricMean(values: number[]): number {
  if (values.length === 0) return 1;
  if (values.some((v) => v <= 0)) return 0;
  return Math.exp(values.reduce((sum, v) => sum + Math.log(v), 0) / values.length);
}

/** How a review counts: an APPROVE verdict, no file changed, and (with a rubric) the mean at the threshold. */
export function ballot(jury: Pick<Jury, "dimensions" | "threshold">, reviewer: Reviewer, review: Review, changed: string[]): Ballot {
  const base = { reviewer, review, changed };
  if (changed.length > 0) return { ...base, approves: false, why: `changed files (${changed.slice(0, 5).join(", ")}${changed.length > 5 ? ", …" : ""})` };
  if (review.verdict === undefined) return { ...base, approves: false, why: "no verdict" };
  let mean: number | undefined;
  if (jury.dimensions.length > 0) {
    mean = geometricMean(jury.dimensions.map((d) => review.scores[d.toLowerCase()] ?? 0));
    if (review.verdict === "APPROVE" && mean < jury.threshold) {
      const low = jury.dimensions.filter((d) => (review.scores[d.toLowerCase()] ?? 0) < jury.threshold).map((d) => `${d} ${review.scores[d.toLowerCase()] ?? "unscored"}`);
      return { ...base, mean, approves: false, why: `rubric: geometric mean ${mean.toFixed(2)} under ${jury.threshold} (${low.join(", ")})` };
    }
  }
  return { ...base, ...(mean !== undefined ? { mean } : {}), approves: review.verdict === "APPROVE", ...(review.verdict === "REJECT" ? { why: "rejected" } : {}) };
}

/**
 * The rejecting reviewers' findings for the next round: each attributed (lens, model), paragraphs
 * another reviewer already gave left out, the whole cut to `limit` characters.
 */
export function juryFindings(ballots: Ballot[], limit: number): string {
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const b of ballots.filter((x) => !x.approves)) {
    const paragraphs = b.review.findings
      .split(/\n\s*\n/)
      .map((p) => p.trim())
      .filter((p) => {
        const key = p.toLowerCase().replace(/\W+/g, " ").trim();
        if (key === "" || seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    const body = paragraphs.join("\n\n") || (b.changed.length > 0 ? "(its review does not count: it changed files it was only to read)" : "(no findings given)");
    parts.push(`### ${b.reviewer.name}: ${b.why ?? "rejected"}\n\n${body}`);
  }
  const text = parts.join("\n\n");
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

/** The jury's confidence, for the stall sensor: the mean confidence of the approving share. */
export function juryConfidence(ballots: Ballot[]): number {
  if (ballots.length === 0) return 0;
  const each = ballots.map((b) => (b.approves ? (b.review.confidence ?? 1) : 0));
  return each.reduce((sum, v) => sum + v, 0) / each.length;
}

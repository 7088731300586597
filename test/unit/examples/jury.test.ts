/** The jury of converge and ralph (examples/workflows/shared/jury.ts): reading reviews, the rubric's geometric mean, the quorum's ballots, attributed findings. */
import { describe, expect, it } from "vitest";
import { ballot, geometricMean, juryFindings, parseReview, parseReviewers } from "../../../examples/workflows/shared/jury.ts";

const DIMENSIONS = ["intent match", "evidence quality", "outcome coherence"];
const jury = { dimensions: DIMENSIONS, threshold: 0.6 };
const reviewer = parseReviewers("claude:sonnet:correctness", "claude")[0]!;
const arithmetic = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const scored = (scores: number[], verdict = "APPROVE") =>
  `${DIMENSIONS.map((d, i) => `<score dimension="${d}">${scores[i]}</score>`).join("\n")}\n<confidence>90%</confidence>\n<verdict>${verdict}</verdict>`;

describe("the rubric: a threshold on the dimensions' geometric mean", () => {
  it.each([
    { scores: [0.95, 0.95, 0.95], approves: true, arithmeticWould: true },
    { scores: [0.2, 0.95, 0.95], approves: false, arithmeticWould: true }, // one weak dimension sinks it
    { scores: [0.5, 0.95, 0.95], approves: true, arithmeticWould: true }, // 0.77 geometric
    { scores: [0.75, 0.75, 0.75], approves: true, arithmeticWould: true },
    { scores: [0, 1, 1], approves: false, arithmeticWould: true }, // 0.67 arithmetic
    { scores: [0.55, 0.55, 0.55], approves: false, arithmeticWould: false },
  ])("$scores → approves $approves (the arithmetic mean would say $arithmeticWould)", ({ scores, approves, arithmeticWould }) => {
    const review = parseReview(scored(scores));
    expect(ballot(jury, reviewer, review, []).approves).toBe(approves);
    expect(arithmetic(scores) >= jury.threshold).toBe(arithmeticWould);
  });

  it("the contrast in numbers: 0.2 among 0.95s is 0.70 arithmetic, 0.57 geometric; a dimension not scored counts as 0", () => {
    expect(arithmetic([0.2, 0.95, 0.95])).toBeCloseTo(0.7, 5);
    expect(geometricMean([0.2, 0.95, 0.95])).toBeCloseTo(0.565, 3);
    const unscored = ballot(jury, reviewer, parseReview('<score dimension="intent match">1</score><verdict>APPROVE</verdict>'), []);
    expect(unscored).toMatchObject({ approves: false, mean: 0 });
    expect(unscored.why).toContain("evidence quality unscored");
  });
});

describe("ballots", () => {
  it("no verdict or a changed file never approves; a percentage reads as a fraction; the last verdict counts", () => {
    const noRubric = { dimensions: [], threshold: 0.7 };
    expect(ballot(noRubric, reviewer, parseReview("Looks fine."), []).approves).toBe(false);
    expect(ballot(noRubric, reviewer, parseReview("<verdict>APPROVE</verdict>"), ["M src/a.ts"])).toMatchObject({ approves: false, why: "changed files (M src/a.ts)" });
    const review = parseReview("echo <verdict>APPROVE</verdict> then\n<confidence>85%</confidence>\n<verdict>REJECT</verdict>");
    expect(review).toMatchObject({ verdict: "REJECT", confidence: 0.85 });
    expect(parseReview('<score dimension="Intent Match">80%</score>').scores).toEqual({ "intent match": 0.8 });
  });

  it("reviewers: type:model:lens, named by lens and model; a bad type or lens is one message", () => {
    expect(parseReviewers("claude:sonnet:correctness codex::adversarial codex:gpt-5", "claude").map((r) => r.name)).toEqual([
      "correctness (claude, sonnet)",
      "adversarial (codex)",
      "codex, gpt-5",
    ]);
    expect(parseReviewers("", "amp")).toEqual([{ type: "amp", name: "judge" }]);
    expect(() => parseReviewers("gpt:x", "claude")).toThrow(/agent type must be one of/);
    expect(() => parseReviewers("claude:x:../etc", "claude")).toThrow(/a lens is a name/);
  });
});

describe("findings for the next round", () => {
  it("only the rejecting reviewers', attributed, deduplicated across reviewers, capped", () => {
    const [a, b, c] = parseReviewers("claude:opus:correctness codex:gpt-5:adversarial claude::tests", "claude") as [any, any, any];
    const noRubric = { dimensions: [], threshold: 0 };
    const ballots = [
      ballot(noRubric, a, parseReview("The parser drops the last line.\n\nNo error for an empty file.\n<verdict>REJECT</verdict>"), []),
      ballot(noRubric, b, parseReview("the parser drops the LAST line!\n\nA 2 GB file exhausts memory.\n<verdict>REJECT</verdict>"), []),
      ballot(noRubric, c, parseReview("All good.\n<verdict>APPROVE</verdict>"), []),
    ];
    const text = juryFindings(ballots, 10_000);
    expect(text).toBe(
      "### correctness (claude, opus): rejected\n\nThe parser drops the last line.\n\nNo error for an empty file.\n\n### adversarial (codex, gpt-5): rejected\n\nA 2 GB file exhausts memory.",
    );
    expect(juryFindings(ballots, 40)).toHaveLength(40);
  });
});

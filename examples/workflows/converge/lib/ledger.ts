// converge's memory in git (the Ledger; opt-in, CONVERGE_MEMORY=1): two scratch files in
// <converge dir>/memory/ (gitignored) — the worker's handoff, and a working log the workflow
// appends each round's outcome to — read back into every fresh round with the last milestone
// commits' bodies. On convergence, with CONVERGE_MILESTONE=1, one commit holds the round's work
// and, as its body, the handoff and the compacted log; the scratch files are then cleared.
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The subject of every milestone commit (how the next runs find them). */
const MILESTONE_SUBJECT = "converge: milestone";
/** The working log read back / kept in a milestone: its last lines. */
const LOG_CHARS = 4000;
const HANDOFF_CHARS = 8000;

export interface Ledger {
  dir: string;
  handoff: string;
  log: string;
}

export function ledgerOf(convergeDir: string): Ledger {
  const dir = join(convergeDir, "memory");
  mkdirSync(dir, { recursive: true });
  if (!existsSync(join(dir, ".gitignore"))) writeFileSync(join(dir, ".gitignore"), "# converge's working memory and handoff: scratch files, never committed\n*\n");
  return { dir, handoff: join(dir, "handoff.md"), log: join(dir, "log.md") };
}

function read(path: string, max: number): string {
  if (!existsSync(path)) return "";
  const text = readFileSync(path, "utf8").trim();
  return text.length > max ? `…${text.slice(-max)}` : text;
}

/** One line in the working log. */
export function logRound(ledger: Ledger, line: string): void {
  appendFileSync(ledger.log, `- ${line.replace(/\s*\n\s*/g, " ")}\n`);
}

/** The last milestone commits' bodies (newest first), in `root`'s repository. */
function milestones(root: string, count = 2): string {
  const log = spawnSync("git", ["log", `-${count}`, "--fixed-strings", `--grep=${MILESTONE_SUBJECT}`, "--format=%h %s%n%b%x00"], { cwd: root, encoding: "utf8" });
  if (log.status !== 0) return "";
  return log.stdout
    .split("\0")
    .map((entry) => entry.trim())
    .filter(Boolean)
    .join("\n\n");
}

/** The memory section of the worker's prompt: the handoff, the working log, the last milestones. */
export function memoryPrompt(ledger: Ledger, root: string): string {
  const handoff = read(ledger.handoff, HANDOFF_CHARS);
  const log = read(ledger.log, LOG_CHARS);
  const earlier = milestones(root);
  return [
    "## Memory (loopx converge's Ledger)",
    "",
    `Keep the handoff file \`${ledger.handoff}\` up to date before you finish: what you did, what is left, and what the next round must know. It is read back to you (and to a fresh agent) next round.`,
    "",
    "### Handoff from the last round",
    "",
    handoff || "(none yet)",
    "",
    "### Working log",
    "",
    log || "(empty)",
    ...(earlier ? ["", "### Earlier milestones", "", earlier] : []),
    "",
  ].join("\n");
}

/** The milestone commit: the work (git add -A) with the handoff and the compacted log as its body; the scratch files cleared. */
export function milestone(ledger: Ledger, root: string, subject: string): string | undefined {
  const body = [read(ledger.handoff, HANDOFF_CHARS) || "(no handoff)", "", "Log:", read(ledger.log, LOG_CHARS) || "(empty)"].join("\n");
  // The project's work, not the loop's own files (.loopx/ is installed, often untracked).
  const add = spawnSync("git", ["add", "-A", "--", ".", ":(exclude).loopx"], { cwd: root, encoding: "utf8" });
  if (add.status !== 0) return `milestone not committed: git add failed: ${add.stderr.trim().split("\n")[0]}`;
  const commit = spawnSync("git", ["commit", "-q", "--allow-empty", "-m", `${MILESTONE_SUBJECT} (${subject})`, "-m", body], { cwd: root, encoding: "utf8" });
  if (commit.status !== 0) return `milestone not committed: ${(commit.stderr || commit.stdout).trim().split("\n")[0]}`;
  rmSync(ledger.handoff, { force: true });
  rmSync(ledger.log, { force: true });
  return undefined;
}

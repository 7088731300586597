import { Command } from "clipanion";
import { type LoopxContext, LoopxCommand } from "../context.js";
import { flag, optionalValueOption, repeatedOption, rest, shownInline, valueOption } from "../declare.js";
import { LoopxError, UsageError } from "../../core/errors.js";
import type { RunOutcome, RunRequest } from "../../engine/index.js";
import { RUN_OPTIONS, type RunOptionValues } from "../../engine/options.js";
import { placeholder } from "../command-spec.js";
import { parseOptionText } from "../options.js";

/**
 * `loopx run [options] <workflow>[:<script>]` (spec §4.1, §4.2). Its options are declared here
 * once: the grammar and the help read them from this class. `-h` never reaches execute(): it
 * short-circuits everything else on the line, as the spec requires.
 */
export class RunCommand extends LoopxCommand {
  static override paths = [["run"]];
  static override usage = Command.Usage({
    description: "Run a workflow's script in a loop",
    details: `Runs <workflow>:<script> (default script: index) in a loop: each script's stdout is read as
{"result", "goto", "stop"}; goto moves to another script, no goto restarts from the target,
stop ends the loop.
`,
  });
  static notes = `Durations: seconds (90, 1.5) or with units, largest first: 500ms, 30s, 20m, 2h, 1h30m. When a
limit expires the running script's process group gets SIGTERM, then SIGKILL 5 s later, loopx
prints one line naming the script and the limit, and exits 124 (as timeout(1) does).

Scripts get LOOPX_BIN, LOOPX_PROJECT_ROOT and LOOPX_WORKFLOW, and (loopx's own additions)
LOOPX_TMPDIR (the run's private scratch directory, removed when the run ends), LOOPX_RUN_ID
(the run's id) and LOOPX_ITERATION (this script execution's number, counted as -n counts); with
a record, LOOPX_RUN_RECORD (its path, for 'loopx note' and 'loopx receipt'); with --timeout /
--max-time, LOOPX_SCRIPT_TIMEOUT_MS / LOOPX_RUN_DEADLINE (the limit per script in ms; the run's
end, ms since 1970); with a budget or a progress line, LOOPX_RUN_RECEIPTS (the file 'loopx
receipt' appends to as well, read by loopx after each script).

loopx's own additions: when stderr is a terminal, a progress line before each script and a
summary when the run ends, which for a failed run is the one line saying why (LOOPX_PROGRESS=0
turns them off, LOOPX_PROGRESS=1 on anywhere; NO_COLOR or TERM=dumb: no styling).
Each run's events are recorded in $XDG_STATE_HOME/loopx/runs/ (LOOPX_RECORD=0: off); see
'loopx runs -h'. From another terminal, 'loopx runs stop|pause|continue <id>' steer the run and
'loopx runs resume <id>' goes on with one that was interrupted, timed out, failed or died.

When a run ends (loopx's own addition): --on-end <command> (or LOOPX_ON_END, e.g. in the global
env file) runs <command> once, however the run ends — its guardian runs it if loopx was killed —
in the project root (with --worktree: where you started loopx), with the outcome as JSON on
stdin and LOOPX_END_* variables (RUN_ID, STATE, EXIT_CODE, REASON, ...); limit 30s
(LOOPX_ON_END_TIMEOUT); its failure is one warning line (quoting its last stderr line) and never
changes the exit code; 'loopx runs show' ends with its outcome. The first progress line and the summary name the run's id.

Budgets (loopx's own addition): scripts report what they used with 'loopx receipt' (see
'loopx receipt -h'); with --max-cost <usd> (billed cost; estimates too with --count-estimates)
or --max-tokens <count> (input, cache write, output and reasoning tokens; not cache reads), no
script starts once the run's totals reach the budget, loopx prints one line naming the budget and
the total, and exits 3. 'loopx runs resume <id> --max-cost <more>' raises it, for every later
resume too. A budget of 0, like -n 0, only validates the run.

Worktrees (loopx's own addition): --worktree runs the loop in a new git worktree, on a new
branch loopx/<name> made from the project's HEAD, under $XDG_STATE_HOME/loopx/worktrees/; the
project's untracked .loopx/ is copied in (node_modules directories as symlinks), and each
--worktree-copy path too. Uncommitted changes of your tree are not carried over. At the end a
worktree with no new commit and no change is removed with its branch; otherwise it is kept and
one line names its branch, its path and how to review it. 'loopx runs clean' removes the kept
worktrees of ended runs. A run without --worktree warns when another live run of the same
workflow works in the same tree.

No strays (loopx's own addition): processes that left the script's process group (setsid,
detached children, daemons) but still carry the run's LOOPX_RUN_ID are ended (SIGTERM, the
remaining grace, SIGKILL) when the run is interrupted, times out or fails; after a normal end
(stop, -n reached) they keep running and loopx prints one warning naming them. A daemon meant to
outlive the run drops the variable: env -u LOOPX_RUN_ID my-daemon ...
`;
  static helpShortCircuits = true;

  // The options are the run options table's (engine/options.ts RUN_OPTIONS), declared there once.
  declare targets: string[];

  constructor() {
    super();
    declareRunOptions(this);
    this.targets = rest("target");
  }

  async execute(): Promise<number> {
    if (this.targets.length === 0) throw new UsageError(missingTargetLine(this));
    if (this.targets.length > 1) {
      throw new UsageError(`loopx run takes exactly one target, got ${this.targets.length}: ${this.targets.map((t) => JSON.stringify(t)).join(" ")}`);
    }
    const options = givenRunOptions(this);
    return runFromCli({ target: this.targets[0]!, options }, this.context);
  }
}

/**
 * The run options table (engine/options.ts RUN_OPTIONS) as a command's fields: `loopx run` gets
 * every option with a CLI name (described: the help lists them), `loopx runs resume` those marked
 * `resume` (inline in its usage line). Call from the command's constructor, before its positionals.
 */
export function declareRunOptions(command: object, resume = false): void {
  const fields = command as Record<string, unknown>;
  for (const { name, cli } of RUN_OPTIONS) {
    if (!cli || (resume && !cli.resume)) continue;
    const description = cli.description;
    if (cli.form === "optional" && cli.kind) fields[name] = optionalValueOption(cli.names, cli.kind, description);
    else if (cli.form === "repeated" && cli.kind) fields[name] = repeatedOption(cli.names, cli.kind, description);
    else fields[name] = cli.kind ? valueOption(cli.names, cli.kind, description) : flag(cli.names, description);
    // On `runs resume`: listed in its own help, inline in `runs -h` and the top-level help.
    if (resume) shownInline(fields[name]);
  }
}

/**
 * The run options given on the command line, parsed by the kind of their value (a usage error names
 * the option); an option that needs another says so in the CLI's words (not on a resume: the run
 * recorded the other one).
 */
export function givenRunOptions(command: object, resume = false): RunOptionValues {
  const fields = command as Record<string, string | string[] | boolean | undefined>;
  const given: Record<string, unknown> = {};
  for (const { name, cli } of RUN_OPTIONS) {
    const value = cli && (!resume || cli.resume) ? fields[name] : undefined;
    if (value === undefined || value === false) continue;
    given[name] = typeof value === "string" && cli?.kind ? parseOptionText(cli.kind, value, cli.names) : value;
  }
  for (const option of resume ? [] : RUN_OPTIONS) {
    const other = "requires" in option ? RUN_OPTIONS.find((o) => o.name === option.requires) : undefined;
    if (other?.cli && option.cli && given[option.name] !== undefined && given[other.name] === undefined) {
      throw new UsageError(`${option.cli.names} needs ${other.cli.names}${other.cli.kind && other.cli.form !== "optional" ? ` ${placeholder(other.cli.kind)}` : ""}`);
    }
  }
  return given;
}

/**
 * `loopx run --timeout main`: the target was taken as an option's value, so what is missing is the
 * value (the duration, the count), not the target; the line names it.
 */
function missingTargetLine(command: object): string {
  const fields = command as Record<string, string | boolean | undefined>;
  for (const { name, cli } of RUN_OPTIONS) {
    const value = fields[name];
    if (!cli?.kind || !cli.example || typeof value !== "string") continue;
    try {
      parseOptionText(cli.kind, value, cli.names);
    } catch {
      return `${cli.names} needs ${cli.example}: it took ${JSON.stringify(value)} as its value, and loopx run has no target (loopx run ${cli.names} <value> <workflow>[:<script>])`;
    }
  }
  return "loopx run needs a target: loopx run <workflow>[:<script>]";
}

/**
 * `loopx run` after parsing: the engine runs the loop without printing results (spec §7.1); every
 * CLI run is recorded (LOOPX_RECORD=0 turns it off), shows progress on a terminal and is cancelled
 * by SIGINT/SIGTERM (spec §7.3). The outcome's error is the one stderr line; its exit code is ours.
 */
export async function runFromCli(request: { target: string; options: RunOptionValues }, context: LoopxContext): Promise<number> {
  // LOOPX_SANDBOX (environment) is the default of --sandbox for `loopx run` (src/sandbox).
  const sandbox = request.options.sandbox ?? (context.env.LOOPX_SANDBOX || undefined);
  return runToEnd({ target: request.target, options: { ...request.options, ...(sandbox !== undefined ? { sandbox } : {}), record: true } }, context);
}

/**
 * `loopx runs resume <id> [-n <count>] [budgets]`: the run goes on in this terminal, as `loopx run` would
 * have gone on (the engine asks control/resume.ts where, which refuses with one line).
 */
export async function resumeFromCli(id: string, options: RunOptionValues, context: LoopxContext): Promise<number> {
  return runToEnd({ options, resume: { id } }, context);
}

async function runToEnd(request: Pick<RunRequest, "target" | "options" | "resume">, context: LoopxContext): Promise<number> {
  // The engine is loaded only now: `loopx run -h`, the help and the completion do not pay for it.
  const { startRun } = await import("../../engine/index.js");
  const outcome: RunOutcome = await startRun({
    ...request,
    argv: context.argv,
    projectRoot: context.cwd,
    baseEnv: context.env,
    progress: true,
    signals: true,
    compactHeap: true,
    onEndFromEnv: true,
  }).complete();
  const error = outcome.error;
  // An interruption (a signal, `loopx runs stop --now`) ends with its exit code and no error line.
  if (error !== undefined && outcome.reason !== "interrupted") {
    throw error instanceof LoopxError ? error : new LoopxError(error instanceof Error ? error.message : String(error));
  }
  return outcome.exitCode ?? 0;
}

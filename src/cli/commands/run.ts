import { Command, Option } from "clipanion";
import { parseDuration } from "../../core/duration.js";
import { UsageError } from "../../core/errors.js";
import { budgetOptions, optionalValueOption, parseCount, parseDurationOption, repeatedOption, valueOption } from "../options.js";

/**
 * `loopx run [options] <workflow>[:<script>]` (spec §4.1, §4.2). Its options are declared here
 * once: the grammar and the help read them from this class. `-h` never reaches execute(): it
 * short-circuits everything else on the line, as the spec requires.
 */
export class RunCommand extends Command {
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
in the project root, with the outcome as JSON on stdin and LOOPX_END_* variables (RUN_ID, STATE,
EXIT_CODE, REASON, ...); limit 30s (LOOPX_ON_END_TIMEOUT); its failure is one warning line and
never changes the exit code. The first progress line and the summary name the run's id.

Budgets (loopx's own addition): scripts report what they used with 'loopx receipt' (see
'loopx receipt -h'); with --max-cost <usd> (billed cost; estimates too with --count-estimates)
or --max-tokens <count>, no script starts once the run's totals reach the budget, loopx prints
one line naming the budget and the total, and exits 3. 'loopx runs resume <id> --max-cost <more>'
raises it.

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

  maxIterations = valueOption("-n", "count", "Stop after <count> script executions (goto hops count); 0 only validates");
  envFile = valueOption("-e", "env-file", "Env file merged over the global env ($XDG_CONFIG_HOME/loopx/env)");
  log = valueOption("--log", "log-file", "Append the run's events (JSON lines) to <file> too (loopx's own addition)");
  timeout = valueOption("--timeout", "duration", "Limit for each script execution (loopx's own addition)");
  maxTime = valueOption("--max-time", "duration", "Limit for the whole run; no script starts after it (loopx's own addition)");
  onEnd = valueOption("--on-end", "command", "Run <command> (sh -c) once when the run ends, however it ends (loopx's own addition)");
  maxCost = valueOption("--max-cost", "usd", "Budget: no script starts once the run's billed cost reaches <usd>; exit 3 (loopx's own addition)");
  countEstimates = Option.Boolean("--count-estimates", false, { description: "With --max-cost: estimated cost counts too (loopx's own addition)" });
  maxTokens = valueOption("--max-tokens", "count", "Budget: no script starts once the run's tokens reach <count>; exit 3 (loopx's own addition)");
  worktree = optionalValueOption("--worktree", "worktree-name", "Run in a new git worktree on branch loopx/<name> (default name: the run id; loopx's own addition)");
  worktreeCopy = repeatedOption("--worktree-copy", "path", "Copy this untracked path into the worktree too (repeatable; loopx's own addition)");
  summary = Option.Boolean("--summary", false, { description: "Print the summary line when the run ends, also off a terminal (loopx's own addition)" });
  targets = Option.Rest({ name: "target" });

  /**
   * `loopx run --timeout main`: the target was taken as the option's value, so what is missing is
   * the value (the duration, the count), not the target; the line names it.
   */
  private missingTarget(): string {
    const valued: Array<[string, string | undefined, (value: string) => boolean, string]> = [
      ["--timeout", this.timeout, (value) => parseDuration(value).ok, "a duration, e.g. --timeout 20m"],
      ["--max-time", this.maxTime, (value) => parseDuration(value).ok, "a duration, e.g. --max-time 8h"],
      ["-n", this.maxIterations, (value) => /^[0-9]+$/.test(value), "a count, e.g. -n 10"],
    ];
    for (const [flag, value, valid, example] of valued) {
      if (value !== undefined && !valid(value)) {
        return `${flag} needs ${example}: it took ${JSON.stringify(value)} as its value, and loopx run has no target (loopx run ${flag} <value> <workflow>[:<script>])`;
      }
    }
    return "loopx run needs a target: loopx run <workflow>[:<script>]";
  }

  async execute(): Promise<number> {
    const count = this.maxIterations;
    const envFile = this.envFile;
    const timeout = this.timeout;
    const maxTime = this.maxTime;
    const log = this.log;
    if (log === "") throw new UsageError("--log needs a file path");
    if (this.onEnd !== undefined && this.onEnd.trim() === "") throw new UsageError("--on-end needs a command");
    if (this.targets.length === 0) throw new UsageError(this.missingTarget());
    if (this.targets.length > 1) {
      throw new UsageError(`loopx run takes exactly one target, got ${this.targets.length}: ${this.targets.map((t) => JSON.stringify(t)).join(" ")}`);
    }
    const maxIterations = count === undefined ? undefined : parseCount(count, "-n");
    const features = {
      timeout: timeout === undefined ? undefined : parseDurationOption(timeout, "--timeout"),
      maxTime: maxTime === undefined ? undefined : parseDurationOption(maxTime, "--max-time"),
      ...budgetOptions(this),
    };
    const { runFromCli } = await import("../run-loop.js");
    return runFromCli({
      target: this.targets[0]!,
      maxIterations,
      envFile,
      log,
      summary: this.summary,
      ...(this.onEnd !== undefined ? { onEnd: this.onEnd } : {}),
      argv: process.argv.slice(2),
      features,
      ...(this.worktree !== undefined && this.worktree !== false ? { worktree: this.worktree } : {}),
      ...(this.worktreeCopy !== undefined ? { worktreeCopy: this.worktreeCopy } : {}),
    });
  }
}

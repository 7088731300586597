import { Command } from "clipanion";
import { LoopxCommand } from "../context.js";
import { flag, inlineFlag, inlineValue, positional, valueOption } from "../declare.js";
import { UsageError } from "../../core/errors.js";
import type { CommandGroup } from "../command-spec.js";
import { RUN_STATES } from "../../core/run-states.js";
import { parseCount, parseDurationOption } from "../options.js";
import { declareRunOptions, givenRunOptions } from "./run.js";
import { RunsCleanCommand } from "./runs-clean.js";

/** `loopx runs` (loopx's own extension): the run records under $XDG_STATE_HOME/loopx/runs/. */

/** The help's list of run states, from the one declaration (core/run-states.ts RUN_STATES), wrapped at 100 columns. */
function statesLine(): string {
  const words = `States: ${RUN_STATES.join(", ")} (crashed: also a run whose process is gone without a run.end).`.split(" ");
  const lines = [""];
  for (const word of words) {
    const line = lines.at(-1)!;
    if (line !== "" && line.length + 1 + word.length > 100) lines.push(word);
    else lines[lines.length - 1] = line === "" ? word : `${line} ${word}`;
  }
  return lines.join("\n");
}

/** `loopx runs [--all] [--limit N] [--state S] [--json]`: recent runs, newest first. */
export class RunsListCommand extends LoopxCommand {
  static override paths = [["runs"]];
  static override usage = Command.Usage({
    description:
      "This project's recent runs, newest first: id (its shortest\nunique prefix highlighted), state, start, duration, iterations,\ncost and tokens (when its scripts sent receipts), target;\n--since 24h: those started since, and what their receipts\nadd up to, per project and model",
  });
  json = flag("--json");
  all = flag("--all");
  limit = valueOption("--limit", "count");
  state = valueOption("--state", "run-state");
  since = valueOption("--since", "duration");

  async execute(): Promise<number> {
    const { listRuns } = await import("../../records/runs.js");
    const { goingRuns } = await import("../../control/live.js");
    const limit = this.limit === undefined ? undefined : parseCount(this.limit, "--limit");
    const since = this.since === undefined ? undefined : Date.now() - parseDurationOption(this.since, "--since");
    const { env, cwd } = this.context;
    listRuns(env, { json: this.json, all: this.all, limit, state: this.state, cwd, highlight: this.highlightIds(), ...(since !== undefined ? { since } : {}) }, (text) => this.out(text), await goingRuns(env));
    return 0;
  }

  /** Ids get their shortest unique prefix in bold on a terminal (NO_COLOR / TERM=dumb: never). */
  private highlightIds(): boolean {
    return this.stdoutIsTerminal() && !this.context.env.NO_COLOR && this.context.env.TERM !== "dumb";
  }
}

/** `loopx runs show [<id> | latest] [--last N] [--json]`: one row per iteration. */
export class RunsShowCommand extends LoopxCommand {
  static override paths = [["runs", "show"]];
  static override usage = Command.Usage({
    description: "One run's iterations (a unique prefix of the id is enough;\nno id or latest: this project's newest run)",
    examples: [
      ["this project's newest run, one row per iteration", "$0 runs show"],
      ["the last 5 iterations of run mwzod2k3 (a unique prefix of its id)", "$0 runs show mwzod2k3 --last 5"],
      ["the newest run's events, one JSON object per line", "$0 runs show latest --json"],
    ],
  });
  json = inlineFlag("--json", "The record's events, one JSON object per line (then a totals line)");
  last = inlineValue("--last", "count", "Only the last <count> iterations");
  markdown = inlineFlag("--markdown", "The run as a Markdown summary (the GitHub Action's job summary)");
  outcome = inlineFlag("--outcome", "How the run ended, as one JSON object");
  id = positional("run-id", { required: false });

  async execute(): Promise<number> {
    const { showRun } = await import("../../records/runs.js");
    const last = this.last === undefined ? undefined : parseCount(this.last, "--last");
    const formats = [this.json && "--json", this.markdown && "--markdown", this.outcome && "--outcome", last !== undefined && (this.markdown || this.outcome) && "--last"].filter(Boolean);
    if (formats.length > 1) throw new UsageError(`runs show takes one of --json, --markdown and --outcome (--last only with the table or --json), got ${formats.join(" and ")}`);
    showRun(this.context.env, this.id, this.context.cwd, { json: this.json, last, markdown: this.markdown, outcome: this.outcome }, (text) => this.out(text));
    return 0;
  }
}

/** `loopx runs tail [<id> | latest] [--json]`: follows a run until it ends; exits as the run did. */
export class RunsTailCommand extends LoopxCommand {
  static override paths = [["runs", "tail"]];
  static override usage = Command.Usage({
    description: "Follow a run until it ends (no id or latest: this project's\nnewest run); exits with the run's exit code",
    examples: [["follow this project's newest run", "$0 runs tail"], ["its events as JSON lines", "$0 runs tail mwzod2k3 --json"]],
  });
  json = inlineFlag("--json", "The record's events, one JSON object per line");
  id = positional("run-id", { required: false });

  async execute(): Promise<number> {
    const { tailRun } = await import("../../records/runs.js");
    return tailRun(this.context.env, this.id, this.context.cwd, this.json, (text) => this.out(text));
  }
}

/** `loopx runs stop <id> [--now]`: the running script finishes and no further one starts (--now: as Ctrl-C). */
export class RunsStopCommand extends LoopxCommand {
  static override paths = [["runs", "stop"]];
  static override usage = Command.Usage({
    description: "Stop a run after its running script (--now: as Ctrl-C)",
    examples: [
      ["no further script starts in run mwzod2k3 (its id's bold prefix on its terminal)", "$0 runs stop mwzod2k3"],
      ["stop it now, as Ctrl-C in its terminal would", "$0 runs stop mwzod2k3 --now"],
    ],
  });
  now = inlineFlag("--now", "Interrupt the running script, as Ctrl-C in the run's terminal");
  id = positional("run-id");

  async execute(): Promise<number> {
    const { requestControl } = await import("../../control/client.js");
    this.out(`${await requestControl(this.context.env, this.id, { op: "stop", now: this.now })}\n`);
    return 0;
  }
}

/** `loopx runs pause <id>`: the running script finishes; the next one waits for `runs continue`. */
export class RunsPauseCommand extends LoopxCommand {
  static override paths = [["runs", "pause"]];
  static override usage = Command.Usage({
    description: "Pause a run: its running script finishes, the next one waits",
    examples: [["pause run mwzod2k3; 'loopx runs continue mwzod2k3' goes on", "$0 runs pause mwzod2k3"]],
  });
  id = positional("run-id");

  async execute(): Promise<number> {
    const { requestControl } = await import("../../control/client.js");
    this.out(`${await requestControl(this.context.env, this.id, { op: "pause" })}\n`);
    return 0;
  }
}

/** `loopx runs continue <id>`: a paused run goes on. */
export class RunsContinueCommand extends LoopxCommand {
  static override paths = [["runs", "continue"]];
  static override usage = Command.Usage({ description: "Continue a paused run", examples: [["run mwzod2k3 starts its next script", "$0 runs continue mwzod2k3"]] });
  id = positional("run-id");

  async execute(): Promise<number> {
    const { requestControl } = await import("../../control/client.js");
    this.out(`${await requestControl(this.context.env, this.id, { op: "continue" })}\n`);
    return 0;
  }
}

/** `loopx runs resume <id> [-n <count>]`: a run that ended early or died goes on, in this terminal. */
export class RunsResumeCommand extends LoopxCommand {
  static override paths = [["runs", "resume"]];
  static override usage = Command.Usage({
    description: "Resume a run that ended early or died, where it was\n(-n: <count> more iterations; default: what its -n left;\n--max-cost / --max-tokens: the whole run's new budget)",
    examples: [
      ["go on where run mwzod2k3 ended, with what its -n left", "$0 runs resume mwzod2k3"],
      ["10 more iterations, and a budget of $5 for the whole run", "$0 runs resume mwzod2k3 -n 10 --max-cost 5"],
    ],
  });
  // -n and the budgets: the run options marked `resume` in engine/options.ts RUN_OPTIONS.
  declare id: string;

  constructor() {
    super();
    declareRunOptions(this, true);
    this.id = positional("run-id");
  }

  async execute(): Promise<number> {
    const { resumeFromCli } = await import("./run.js");
    return resumeFromCli(this.id, givenRunOptions(this, true), this.context);
  }
}

/** `loopx runs serve [--port <port>] [--host <address>] [--open]`: a live web dashboard over the records. */
export class RunsServeCommand extends LoopxCommand {
  static override paths = [["runs", "serve"]];
  static override usage = Command.Usage({
    description: "A live web dashboard of every run, at the URL it prints",
    examples: [
      ["serve on 127.0.0.1:7420 and open the URL in a browser", "$0 runs serve --open"],
      ["any free port", "$0 runs serve --port 0"],
    ],
  });
  port = inlineValue("--port", "port", "The port to listen on (default 7420; 0: any free port)");
  host = inlineValue("--host", "address", "The address to listen on (default 127.0.0.1; another one warns)");
  open = inlineFlag("--open", "Open the URL in a browser");

  async execute(): Promise<number> {
    const [{ serveRuns }, { VERSION }, { warnToStderr }] = await Promise.all([
      import("../../dashboard/serve.js"),
      import("../../version.js"),
      import("../../os/stderr.js"),
    ]);
    return serveRuns({ port: this.port, host: this.host, open: this.open }, this.context.env, VERSION, (text) => this.out(text), warnToStderr);
  }
}

export const RUNS_COMMANDS: CommandGroup = {
  name: "runs",
  commands: [RunsListCommand, RunsShowCommand, RunsTailCommand, RunsStopCommand, RunsPauseCommand, RunsContinueCommand, RunsResumeCommand, RunsServeCommand, RunsCleanCommand],
  description: "Recent runs, one run's iterations, follow, stop, pause, continue\nor resume a run, a dashboard, clean worktrees (loopx's own addition;\nsee 'loopx runs -h')",
  details: `loopx's own addition. Every 'loopx run' writes a record of its events, one JSON object per line,
to $XDG_STATE_HOME/loopx/runs/<LOOPX_RUN_ID>.jsonl (default ~/.local/state/loopx/runs/); the
newest 200 are kept, each at most LOOPX_RECORD_MAX_BYTES (default 8 MiB: the first and the last
iterations stay, a line counts what was dropped between them). LOOPX_RECORD=0 turns records off.
${statesLine()}

'loopx runs' lists this directory's runs (--all: every project's), at most --limit (default 20),
only those in --state. An id's shortest unique prefix (at least 6 characters) is bold on a
terminal; 'latest' (or no id, for show and tail) is this project's newest run. 'runs show --last
<n>': its last <n> iterations only; --markdown: the run as a Markdown summary (the GitHub
Action's job summary), --outcome: how it ended as one JSON object. 'runs tail' exits with the
run's exit code (crashed: 1). A run whose loopx and guardian were killed together has no
run.end: its duration counts to its last sign of life, a lower bound (shown as ≥; --json:
durationMs with "durationAtLeast": true), and 'loopx runs' and the next 'loopx run' in its
project name what it left (its processes, its LOOPX_TMPDIR) and the command that ends them.
What scripts wrote (results, errors, notes, a failed script's last stderr lines) is shown with its
control characters escaped.

Every run (CLI and API) can be steered from another terminal by its id or a unique prefix of it,
by the user who started it only: stop, pause and continue go through the run's control channel,
a Unix socket in a directory only that user can enter ($XDG_STATE_HOME/loopx/control/;
LOOPX_CONTROL=0 runs without one). A paused run's --max-time keeps counting. resume goes on with
a run that ended early or died, in its own project, with the same LOOPX_RUN_ID, its env file and
options, LOOPX_ITERATION counting on, a new LOOPX_TMPDIR and the same record; the script that was
running runs again with exactly the bytes it got on stdin. Nothing to resume after a stop
(by a script or runs stop) or -n reached (unless a new -n is given).

'runs serve' listens on 127.0.0.1:7420 (--port 0: any free port) and prints its URL once, with
a random token every request must carry. Another --host is allowed, with a warning: anyone who
reaches it with the URL can watch and steer your runs. --open opens the URL in a browser.

'runs clean' removes the git worktrees (and their loopx/<name> branches) that ended
'loopx run --worktree' runs kept, this project's (--all: every project's): never a live run's;
one whose branch has commits its repository's HEAD does not contain, or with uncommitted
changes, only with --force. --dry-run lists what it would do.
`,
};

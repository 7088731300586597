import { Command, Option } from "clipanion";
import type { CommandGroup } from "../command-spec.js";
import { parseCount, valueOption } from "../options.js";

/** `loopx runs` (loopx's own extension): the run records under $XDG_STATE_HOME/loopx/runs/. */

const out = (text: string) => void process.stdout.write(text);

/** `loopx runs [--all] [--limit N] [--state S] [--json]`: recent runs, newest first. */
export class RunsListCommand extends Command {
  static override paths = [["runs"]];
  static override usage = Command.Usage({ description: "This project's recent runs, newest first: id (its shortest\nunique prefix highlighted), state, start, duration, iterations,\ntarget" });
  json = Option.Boolean("--json", false);
  all = Option.Boolean("--all", false);
  limit = valueOption("--limit", "count");
  state = valueOption("--state", "run-state");

  async execute(): Promise<number> {
    const { listRuns } = await import("../../records/runs.js");
    const limit = this.limit === undefined ? undefined : parseCount(this.limit, "--limit");
    listRuns(process.env, { json: this.json, all: this.all, limit, state: this.state, cwd: process.cwd(), highlight: highlightIds() }, out);
    return 0;
  }
}

/** `loopx runs show [<id> | latest] [--last N] [--json]`: one row per iteration. */
export class RunsShowCommand extends Command {
  static override paths = [["runs", "show"]];
  static override usage = Command.Usage({ description: "One run's iterations (a unique prefix of the id is enough;\nno id or latest: this project's newest run)" });
  json = Option.Boolean("--json", false);
  last = valueOption("--last", "count");
  id = Option.String({ name: "run-id", required: false });

  async execute(): Promise<number> {
    const { showRun } = await import("../../records/runs.js");
    const last = this.last === undefined ? undefined : parseCount(this.last, "--last");
    showRun(process.env, this.id, process.cwd(), { json: this.json, last }, out);
    return 0;
  }
}

/** `loopx runs tail [<id> | latest] [--json]`: follows a run until it ends; exits as the run did. */
export class RunsTailCommand extends Command {
  static override paths = [["runs", "tail"]];
  static override usage = Command.Usage({ description: "Follow a run until it ends (no id or latest: this project's\nnewest run); exits with the run's exit code" });
  json = Option.Boolean("--json", false);
  id = Option.String({ name: "run-id", required: false });

  async execute(): Promise<number> {
    const { tailRun } = await import("../../records/runs.js");
    return tailRun(process.env, this.id, process.cwd(), this.json, out);
  }
}

/** Ids get their shortest unique prefix in bold on a terminal (NO_COLOR / TERM=dumb: never). */
function highlightIds(): boolean {
  return process.stdout.isTTY === true && !process.env.NO_COLOR && process.env.TERM !== "dumb";
}

export const RUNS_COMMANDS: CommandGroup = {
  name: "runs",
  commands: [RunsListCommand, RunsShowCommand, RunsTailCommand],
  description: "Recent runs, one run's iterations, or follow a run\n(loopx's own addition; see 'loopx runs -h')",
  details: `loopx's own addition. Every 'loopx run' writes a record of its events, one JSON object per line,
to $XDG_STATE_HOME/loopx/runs/<LOOPX_RUN_ID>.jsonl (default ~/.local/state/loopx/runs/); the
newest 200 are kept, each at most LOOPX_RECORD_MAX_BYTES (default 8 MiB: the first and the last
iterations stay, a line counts what was dropped between them). LOOPX_RECORD=0 turns records off.
States: running, stopped, limit, failed, interrupted, timed-out, aborted, returned, or crashed (its
process is gone without a run.end).

  --all          runs of every project (default: this directory's)
  --limit <n>    at most <n> runs (default 20)
  --state <s>    only runs in that state
  --last <n>     runs show: the last <n> iterations only
  --json         one JSON object per line (records' text with control characters escaped)

What scripts wrote (results, errors, notes, stderr) is shown with control characters escaped.
`,
};

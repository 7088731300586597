import { Command, Option } from "clipanion";
import type { CommandGroup } from "../command-spec.js";

/** `loopx runs` (loopx's own extension): the run records under $XDG_STATE_HOME/loopx/runs/. */

const out = (text: string) => void process.stdout.write(text);

/** `loopx runs [--json]`: recent runs, newest first. */
export class RunsListCommand extends Command {
  static override paths = [["runs"]];
  static override usage = Command.Usage({ description: "Recent runs, newest first: id, state, start, duration,\niterations, target, project" });
  json = Option.Boolean("--json", false);

  async execute(): Promise<number> {
    const { listRuns } = await import("../../records/runs.js");
    listRuns(process.env, this.json, out);
    return 0;
  }
}

/** `loopx runs show <id> [--json]`: one row per iteration (a unique prefix of the id is enough). */
export class RunsShowCommand extends Command {
  static override paths = [["runs", "show"]];
  static override usage = Command.Usage({ description: "One run's iterations (a unique prefix of the id is enough)" });
  json = Option.Boolean("--json", false);
  id = Option.String({ name: "run-id" });

  async execute(): Promise<number> {
    const { showRun } = await import("../../records/runs.js");
    showRun(process.env, this.id, this.json, out);
    return 0;
  }
}

/** `loopx runs tail [<id>] [--json]`: follows a run until it ends; default the current project's latest. */
export class RunsTailCommand extends Command {
  static override paths = [["runs", "tail"]];
  static override usage = Command.Usage({ description: "Follow a run until it ends (default: this project's latest run)" });
  json = Option.Boolean("--json", false);
  id = Option.String({ name: "run-id", required: false });

  async execute(): Promise<number> {
    const { tailRun } = await import("../../records/runs.js");
    await tailRun(process.env, this.id, process.cwd(), this.json, out);
    return 0;
  }
}

export const RUNS_COMMANDS: CommandGroup = {
  name: "runs",
  commands: [RunsListCommand, RunsShowCommand, RunsTailCommand],
  description: "Recent runs, one run's iterations, or follow a run\n(loopx's own addition; see 'loopx runs -h')",
  details: `loopx's own addition. Every 'loopx run' writes a record of its events, one JSON object per line,
to $XDG_STATE_HOME/loopx/runs/<LOOPX_RUN_ID>.jsonl (default ~/.local/state/loopx/runs/); the
newest 200 are kept. LOOPX_RECORD=0 turns records off. States: running, stopped, limit, failed,
interrupted, timed-out, or crashed (its process is gone without a run.end).
`,
};

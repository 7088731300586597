import { Command, Option } from "clipanion";

/** `loopx runs` (loopx's own extension): the run records under $XDG_STATE_HOME/loopx/runs/. */

const out = (text: string) => void process.stdout.write(text);

/** `loopx runs [--json]`: recent runs, newest first. */
export class RunsListCommand extends Command {
  static override paths = [["runs"]];
  static override usage = Command.Usage({ description: "List recent runs" });
  json = Option.Boolean("--json", false, { description: "JSON output" });

  async execute(): Promise<number> {
    const { listRuns } = await import("../../runtime/runs.js");
    listRuns(process.env, this.json, out);
    return 0;
  }
}

/** `loopx runs show <id> [--json]`: one row per iteration (a unique prefix of the id is enough). */
export class RunsShowCommand extends Command {
  static override paths = [["runs", "show"]];
  static override usage = Command.Usage({ description: "Show one run" });
  json = Option.Boolean("--json", false, { description: "JSON output" });
  id = Option.String();

  async execute(): Promise<number> {
    const { showRun } = await import("../../runtime/runs.js");
    showRun(process.env, this.id, this.json, out);
    return 0;
  }
}

/** `loopx runs tail [<id>] [--json]`: follows a run until it ends; default the current project's latest. */
export class RunsTailCommand extends Command {
  static override paths = [["runs", "tail"]];
  static override usage = Command.Usage({ description: "Follow a run until it ends" });
  json = Option.Boolean("--json", false, { description: "JSON output" });
  id = Option.String({ required: false });

  async execute(): Promise<number> {
    const { tailRun } = await import("../../runtime/runs.js");
    await tailRun(process.env, this.id, process.cwd(), this.json, out);
    return 0;
  }
}

/** `loopx runs stop <id> [--now]`: the running script finishes and no further one starts (--now: as Ctrl-C). */
export class RunsStopCommand extends Command {
  static override paths = [["runs", "stop"]];
  static override usage = Command.Usage({ description: "Stop a run after its running script (loopx's own addition)" });
  now = Option.Boolean("--now", false, { description: "Interrupt the running script as Ctrl-C does" });
  id = Option.String();

  async execute(): Promise<number> {
    const { requestControl } = await import("../../control/client.js");
    out(`${await requestControl(process.env, this.id, { op: "stop", now: this.now })}\n`);
    return 0;
  }
}

/** `loopx runs pause <id>`: the running script finishes; the next one waits for `runs continue`. */
export class RunsPauseCommand extends Command {
  static override paths = [["runs", "pause"]];
  static override usage = Command.Usage({ description: "Pause a run before its next script (loopx's own addition)" });
  id = Option.String();

  async execute(): Promise<number> {
    const { requestControl } = await import("../../control/client.js");
    out(`${await requestControl(process.env, this.id, { op: "pause" })}\n`);
    return 0;
  }
}

/** `loopx runs continue <id>`: a paused run goes on. */
export class RunsContinueCommand extends Command {
  static override paths = [["runs", "continue"]];
  static override usage = Command.Usage({ description: "Continue a paused run (loopx's own addition)" });
  id = Option.String();

  async execute(): Promise<number> {
    const { requestControl } = await import("../../control/client.js");
    out(`${await requestControl(process.env, this.id, { op: "continue" })}\n`);
    return 0;
  }
}

/** `loopx runs resume <id> [-n <count>]`: a run that ended early or died goes on, in this terminal. */
export class RunsResumeCommand extends Command {
  static override paths = [["runs", "resume"]];
  static override usage = Command.Usage({ description: "Resume a run that was interrupted, timed out, failed or died (loopx's own addition)" });
  maxIterations = Option.Array("-n", { description: "Run at most <count> more script executions (default: what is left of the run's -n)" });
  id = Option.String();

  async execute(): Promise<number> {
    const { parseCount, single } = await import("../options.js");
    const count = single(this.maxIterations, "-n");
    const { resumeFromCli } = await import("../run-loop.js");
    return resumeFromCli(this.id, count === undefined ? undefined : parseCount(count, "-n"), process.argv.slice(2));
  }
}

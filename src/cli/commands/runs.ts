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

/** `loopx runs serve [--port N] [--host ADDR] [--open]`: a live web dashboard over the records. */
export class RunsServeCommand extends Command {
  static override paths = [["runs", "serve"]];
  static override usage = Command.Usage({ description: "Serve a live web dashboard of the runs" });
  port = Option.String("--port", { description: "Port to listen on (default 7420; 0: any free port)" });
  host = Option.String("--host", { description: "Address to listen on (default 127.0.0.1)" });
  open = Option.Boolean("--open", false, { description: "Open the printed URL in a browser" });

  async execute(): Promise<number> {
    const [{ serveRuns }, { VERSION }, { warnToStderr }] = await Promise.all([
      import("../../dashboard/serve.js"),
      import("../../version.js"),
      import("../../runtime/stderr.js"),
    ]);
    return serveRuns({ port: this.port, host: this.host, open: this.open }, process.env, VERSION, out, warnToStderr);
  }
}

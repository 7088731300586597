import { Command } from "clipanion";
import { LoopxCommand } from "../context.js";
import { flag, valueOption } from "../declare.js";
import { UsageError } from "../../core/errors.js";
import { serializeOutput, type Output } from "../../core/output.js";

/** `loopx output`: serializes flags to structured output JSON; no goto validation (spec §4.3). */
export class OutputCommand extends LoopxCommand {
  static override paths = [["output"]];
  static override usage = Command.Usage({
    description: "Print structured output (for bash scripts)",
    details:
      "Prints structured output JSON for the loop to read; at least one flag is required.\n\n" +
      "--result-file <path> (loopx's own addition) takes the result from a file, or from stdin with -, as it is: for a result too big for an argument (Linux refuses one over 128 KiB: Argument list too long).\n",
  });

  // Without descriptions: the usage line shows them (the help has no options table).
  result = valueOption("--result", "text");
  resultFile = valueOption("--result-file", "path");
  goto = valueOption("--goto", "goto");
  stop = flag("--stop");

  async execute(): Promise<number> {
    if (this.result === undefined && this.resultFile === undefined && this.goto === undefined && !this.stop) {
      throw new UsageError("loopx output needs at least one of --result <value>, --result-file <path>, --goto <target>, --stop");
    }
    if (this.result !== undefined && this.resultFile !== undefined) throw new UsageError("loopx output takes --result or --result-file, not both");
    const output: Output = {};
    if (this.result !== undefined) output.result = this.result;
    if (this.resultFile !== undefined) output.result = await readResult(this.resultFile, this.context.stdin);
    if (this.goto !== undefined) output.goto = this.goto;
    if (this.stop) output.stop = true;
    this.context.stdout.write(`${serializeOutput(output)}\n`);
    return 0;
  }
}

/** The text of `path` (`-`: all of stdin), as it is; a file that cannot be read is one usage line. */
async function readResult(path: string, stdin: AsyncIterable<unknown>): Promise<string> {
  const { readFile } = await import("node:fs/promises");
  try {
    if (path !== "-") return await readFile(path, "utf8");
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as NodeJS.ErrnoException).code === "EISDIR" ? "a directory" : (error as Error).message;
    throw new UsageError(`--result-file ${path}: ${reason}`);
  }
}

import { Command } from "clipanion";
import { LoopxCommand } from "../context.js";
import { VERSION } from "../../version.js";

export class VersionCommand extends LoopxCommand {
  static override paths = [["version"]];
  static override usage = Command.Usage({ description: "Print the loopx version", details: "Prints the loopx version.\n" });

  async execute(): Promise<number> {
    this.context.stdout.write(`${VERSION}\n`);
    return 0;
  }
}

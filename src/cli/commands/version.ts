import { Command } from "clipanion";
import { VERSION } from "../../version.js";

export class VersionCommand extends Command {
  static override paths = [["version"]];
  static override usage = Command.Usage({ description: "Print the loopx version", details: "Prints the loopx version.\n" });

  async execute(): Promise<number> {
    this.context.stdout.write(`${VERSION}\n`);
    return 0;
  }
}

import { Command } from "clipanion";
import { VERSION } from "../../version.js";

export class VersionCommand extends Command {
  static override paths = [["version"]];

  async execute(): Promise<number> {
    this.context.stdout.write(`${VERSION}\n`);
    return 0;
  }
}

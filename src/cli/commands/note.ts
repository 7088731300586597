import { Command, Option } from "clipanion";

/**
 * `loopx note <text>` (loopx's own addition): adds a line to the record of the run the calling
 * script belongs to (see runtime/record-note.ts). Outside a recorded run it does nothing and
 * exits 0, so a script can call it whether or not its run is recorded.
 */
export class NoteCommand extends Command {
  static override paths = [["note"]];
  static override usage = Command.Usage({ description: "Add a note to the current run's record" });
  words = Option.Rest({ required: 1 });

  async execute(): Promise<number> {
    const { note } = await import("../../runtime/record-note.js");
    note(this.words.join(" "));
    return 0;
  }
}

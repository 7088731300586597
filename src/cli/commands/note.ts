import { Command } from "clipanion";
import { LoopxCommand } from "../context.js";
import { rest } from "../declare.js";

/**
 * `loopx note <text>` (loopx's own addition): adds a line to the record of the run the calling
 * script belongs to (see records/note.ts). Outside a recorded run it does nothing and
 * exits 0, so a script can call it whether or not its run is recorded.
 */
export class NoteCommand extends LoopxCommand {
  static override paths = [["note"]];
  static override usage = Command.Usage({
    description: "Note in the current run's record (loopx's own addition)",
    details: `loopx's own addition. From a script of a recorded run, adds <text> (one line) to the run's record
as a "note" event, shown by 'loopx runs show' and 'loopx runs tail'; scripts in JS/TS can call
note(text, data?) from "loopx". Outside a recorded run it does nothing (exit 0). The run gives its
scripts the record's path in LOOPX_RUN_RECORD.
`,
  });
  words = rest("note", 1);

  async execute(): Promise<number> {
    const { note } = await import("../../records/note.js");
    note(this.words.join(" "), undefined, this.context.env);
    return 0;
  }
}

/**
 * The pure half of the records feature (src/records/events.ts: the event types; report.ts: reading
 * records and wording them) holds to the same rule as src/core/: no file system, processes, OS or
 * process object. store.ts, writer.ts and runs.ts are the records' I/O.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../helpers.js";
import { violations } from "../core/purity.test.js";

describe("src/records: the pure modules", () => {
  it("events.ts and report.ts import no node:fs/child_process/crypto/os and use no process", () => {
    const files = ["events.ts", "report.ts"];
    const sources = Object.fromEntries(files.map((file) => [`src/records/${file}`, readFileSync(join(ROOT, "src", "records", file), "utf8")]));
    expect(violations(sources)).toEqual([]);
  });

  it("the check sees an impure module", () => {
    expect(violations({ "x.ts": 'import { readFileSync } from "node:fs";\nexport const pid = process.pid;\n' })).toHaveLength(2);
  });
});

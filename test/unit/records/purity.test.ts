/**
 * The pure half of the records feature (parse.ts, run-state.ts, wording.ts, the tables: reading
 * records and wording them; the event types are in src/core/events.ts) holds to the same rule as
 * src/core/: no file system, processes, OS or process object. What it imports is a
 * dependency-cruiser rule (records-reading-is-pure in
 * .dependency-cruiser.cjs); the globals are scanned here. store.ts, writer.ts and runs.ts are the
 * records' I/O.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../helpers.js";
import { violations } from "../core/globals-scan.js";

describe("src/records: the pure modules", () => {
  it("parse.ts, run-state.ts, wording.ts and the tables use no process, Buffer, Bun or crypto global", () => {
    const files = ["parse.ts", "run-state.ts", "wording.ts", "tables.ts", "table-layout.ts", "run-detail.ts", "run-detail-table.ts", "detail-rows.ts", "chunked-lines.ts"];
    const sources = Object.fromEntries(files.map((file) => [`src/records/${file}`, readFileSync(join(ROOT, "src", "records", file), "utf8")]));
    expect(violations(sources)).toEqual([]);
  });

  it("the check sees an impure module", () => {
    expect(violations({ "x.ts": "export const pid = process.pid;\nexport const b = Buffer.alloc(1);\n" })).toHaveLength(2);
  });
});

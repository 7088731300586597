/**
 * The records directory's listings (src/records/store.ts): the records, newest first, and the runs
 * with a lifeline, which is how a run finds the live runs of its project (worktree/shared-tree.ts,
 * records/leftovers.ts) without reading every record.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { listLiveIds, listRecordIds } from "../../../src/records/store.js";
import { tempDir } from "../../helpers.js";

/** A records directory holding every kind of file a run keeps beside its record. */
function recordsDirectory(): string {
  const dir = tempDir("loopx-records-");
  for (const name of ["mx1old0000000aa.jsonl", "mx2new0000000bb.jsonl", "mx2new0000000bb.live", "mx2new0000000bb.input", "mx3gone000000cc.live", "mx1old0000000aa.closing", "mx1old0000000aa.reserve", "notes.txt"]) {
    writeFileSync(join(dir, name), "");
  }
  mkdirSync(join(dir, "mx4dir00000000dd.jsonl.d"));
  return dir;
}

describe("listing the records directory", () => {
  it("records: the ids of <id>.jsonl files, newest first", () => {
    expect(listRecordIds(recordsDirectory())).toEqual(["mx2new0000000bb", "mx1old0000000aa"]);
  });

  it("lifelines: the ids of <id>.live files alone, whether or not their record is still there", () => {
    expect(listLiveIds(recordsDirectory()).sort()).toEqual(["mx2new0000000bb", "mx3gone000000cc"]);
  });

  it("no records directory yet (or a file in its place): no ids", () => {
    const dir = tempDir("loopx-records-");
    expect(listLiveIds(join(dir, "runs"))).toEqual([]);
    writeFileSync(join(dir, "file"), "");
    expect(listRecordIds(join(dir, "file"))).toEqual([]);
    expect(listLiveIds(join(dir, "file"))).toEqual([]);
  });
});

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fsReason } from "../core/errors.js";
import { parseVersionRequirement, type VersionRequirement } from "../core/version-requirement.js";

/** Reads `<workflowDir>/package.json` and interprets it (see {@link VersionRequirement}). Never rejects. */
export async function readVersionRequirement(workflowDir: string): Promise<VersionRequirement> {
  let text: string;
  try {
    text = readFileSync(join(workflowDir, "package.json"), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { kind: "none" };
    return { kind: "warning", message: `cannot read package.json: ${fsReason(error)}; loopx version check skipped` };
  }
  return parseVersionRequirement(text);
}

/**
 * A shell's `export X=1` line in an env file: the spec's format (§8.1) has no `export`, its key
 * "export X" is invalid and the line is ignored with a warning. loopx keeps that meaning and says
 * why the line is skipped and what to write instead, for any key and value.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseEnvFile } from "../../../src/core/envfile.js";
import { envKey, settableValue } from "../../fixtures/arbitraries.js";

describe("env file: export lines (in-process)", () => {
  it("an export line sets nothing and its warning names the shell syntax and the line to write", () => {
    fc.assert(
      fc.property(envKey, settableValue, fc.constantFrom(" ", "  ", "\t"), (key, value, gap) => {
        const parsed = parseEnvFile(`export${gap}${key}=${value}\n`, "f.env");
        expect([...parsed.vars]).toEqual([]);
        expect(parsed.warnings).toEqual([`f.env:1: ignoring line: 'export ' is shell syntax, not part of loopx's .env format (spec §8.1): write ${key}=... without it`]);
      }),
    );
  });

  it("the other lines of a file mean what they mean without the export line", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(envKey, settableValue), { maxLength: 5 }), envKey, fc.nat(5), (pairs, exported, at) => {
        const lines = pairs.map(([key, value]) => `${key}="${value}"`);
        const withExport = [...lines.slice(0, at), `export ${exported}=1`, ...lines.slice(at)];
        const plain = parseEnvFile(`${lines.join("\n")}\n`, "f.env");
        const mixed = parseEnvFile(`${withExport.join("\n")}\n`, "f.env");
        expect([...mixed.vars]).toEqual([...plain.vars]);
        expect(mixed.warnings).toHaveLength(plain.warnings.length + 1);
      }),
    );
  });

  it("a key that only starts with export is an ordinary key", () => {
    expect([...parseEnvFile("exportX=1\nEXPORT=2\n", "f.env").vars]).toEqual([["exportX", "1"], ["EXPORT", "2"]]);
  });
});

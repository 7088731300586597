import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseHeaders, parseResourceAttributes, scriptResourceAttributes, telemetryCapture, telemetryEnabled } from "../../../src/telemetry/settings.js";
import { derivedIds } from "../../../src/telemetry/sdk.js";

describe("telemetry settings", () => {
  it("on with LOOPX_OTEL (1/true/yes/on) or the API option; OTEL_SDK_DISABLED=true wins", () => {
    expect(telemetryEnabled({})).toBe(false);
    for (const value of ["1", "true", "TRUE", "yes", "on"]) expect(telemetryEnabled({ LOOPX_OTEL: value })).toBe(true);
    for (const value of ["0", "false", "", "nope"]) expect(telemetryEnabled({ LOOPX_OTEL: value })).toBe(false);
    expect(telemetryEnabled({}, true)).toBe(true);
    expect(telemetryEnabled({ LOOPX_OTEL: "1" }, false)).toBe(false);
    expect(telemetryEnabled({ LOOPX_OTEL: "1", OTEL_SDK_DISABLED: "true" }, true)).toBe(false);
    expect(telemetryCapture({ LOOPX_OTEL_CAPTURE_RESULT: "1" })).toEqual({ result: true, stdin: false, scriptHeaders: false });
  });

  it("OTEL_RESOURCE_ATTRIBUTES / _HEADERS: key=value pairs, percent-decoded, malformed entries skipped", () => {
    expect(parseResourceAttributes("a=1,b = two%20words,broken,=x,c=%E2%9C%93,d=%zz")).toEqual([
      ["a", "1"],
      ["b", "two words"],
      ["c", "✓"],
    ]);
    expect(parseHeaders("Authorization=Basic%20abc,x-team=7")).toEqual({ Authorization: "Basic abc", "x-team": "7" });
  });

  it("a script's OTEL_RESOURCE_ATTRIBUTES: the inherited ones, then the run id and iteration, which read back exactly (property)", () => {
    const key = fc.string({ minLength: 1, maxLength: 12 }).filter((k) => k.trim() === k && !k.startsWith("loopx."));
    fc.assert(
      fc.property(fc.array(fc.tuple(key, fc.string({ maxLength: 12 }).map((v) => v.trim())), { maxLength: 5 }), fc.stringMatching(/^[0-9a-z]{8,16}$/), fc.nat(), (pairs, run, n) => {
        const inherited = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join(",");
        const parsed = parseResourceAttributes(scriptResourceAttributes(inherited, run, n));
        expect(parsed.slice(-2)).toEqual([
          ["loopx.run.id", run],
          ["loopx.iteration", String(n)],
        ]);
        expect(parsed.slice(0, -2)).toEqual(parseResourceAttributes(inherited));
      }),
      { numRuns: 300 },
    );
    // A loopx.* attribute given by the user is replaced, never doubled.
    expect(scriptResourceAttributes("loopx.run.id=old,team=a", "r1", 2)).toBe("team=a,loopx.run.id=r1,loopx.iteration=2");
  });

  it("a run's derived trace and span ids: stable, W3C-shaped, different per run", () => {
    const a = derivedIds("0mww8vkj7umoa09");
    expect(a).toEqual(derivedIds("0mww8vkj7umoa09"));
    expect(a.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(a.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(derivedIds("0mww8vkj7umoa0a").traceId).not.toBe(a.traceId);
  });
});

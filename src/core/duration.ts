/**
 * Durations for the time limits (`--timeout`, `--max-time`): a number of seconds (`90`, `1.5`), or
 * numbers with units `w`, `d`, `h`, `m`, `s`, `ms`, combined largest first, each unit at most once
 * (`7d`, `1h30m`, `2m30s`, `1s500ms`; `--since 2w`). Zero, negative, empty or anything else is refused.
 */
import { LoopxError } from "./errors.js";

const UNIT_MS = { w: 604_800_000, d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 } as const;
type Unit = keyof typeof UNIT_MS;
const ORDER: Unit[] = ["w", "d", "h", "m", "s", "ms"];
const NUMBER = "(?:[0-9]+(?:\\.[0-9]+)?|\\.[0-9]+)";
const PART = new RegExp(`^(${NUMBER})(ms|w|d|h|m|s)`);
const SECONDS = new RegExp(`^${NUMBER}$`);

/** Milliseconds for `text`, or a reason it is not a duration. Fractions of a millisecond round up. */
export function parseDuration(text: string): { ok: true; ms: number } | { ok: false; error: string } {
  const bad = (why: string) => ({ ok: false as const, error: `${JSON.stringify(text)} is not a duration: ${why} (e.g. 90, 30s, 20m, 1h30m, 500ms, 7d, 2w)` });
  if (text === "") return bad("it is empty");
  let total = 0;
  if (SECONDS.test(text)) {
    total = Number(text) * 1000;
  } else {
    let rest = text;
    let last = -1;
    while (rest !== "") {
      const match = PART.exec(rest);
      if (!match) return bad(/^-/.test(rest) ? "it is negative" : `unexpected ${JSON.stringify(rest)}`);
      const unit = match[2] as Unit;
      const rank = ORDER.indexOf(unit);
      if (rank <= last) return bad(`units go largest first, each once (w, d, h, m, s, ms)`);
      last = rank;
      total += Number(match[1]) * UNIT_MS[unit];
      rest = rest.slice(match[0].length);
    }
  }
  const ms = Math.ceil(total);
  if (!Number.isFinite(ms)) return bad("it is too long");
  if (ms <= 0) return bad("it must be longer than 0");
  return { ok: true, ms };
}

/** `ms` exactly, the way --timeout takes it: `20m`, `1h30m`, `2s`, `1s500ms` (elapsed times for display: records/wording.ts formatElapsed). */
export function formatDuration(ms: number): string {
  let rest = Math.max(0, Math.round(ms));
  if (rest === 0) return "0s";
  let out = "";
  for (const unit of ORDER) {
    const count = Math.floor(rest / UNIT_MS[unit]);
    if (count > 0) out += `${count}${unit}`;
    rest -= count * UNIT_MS[unit];
  }
  return out;
}

/** Checks an API time limit (milliseconds): a positive finite number, or undefined. */
export function checkLimit(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    const shown = typeof value === "string" ? JSON.stringify(value) : typeof value === "number" ? String(value) : value === null ? "null" : typeof value;
    throw new LoopxError(`${name} must be a positive number of milliseconds, got ${shown}`);
  }
  return value;
}

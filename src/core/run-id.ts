/**
 * A short, URL-safe id that sorts by start time: 8 base-36 digits of ms since 1970, then one digit
 * per random byte (the engine gives 7). The time leads, so ids sort by start time (and after every
 * id older loopx versions made, which padded the time to 9 digits with a leading "0"); its 6th digit
 * changes every 1.3 s, its 7th every 36 ms and its 8th every ms, so runs started in the same second
 * differ within 8 characters unless they started in the same millisecond, and a 6-character prefix
 * is unique unless two runs started within about a second of each other. (8 digits last until 2059.)
 */
export function newRunId(now: number, random: Uint8Array): string {
  let suffix = "";
  for (const byte of random) suffix += (byte % 36).toString(36);
  return `${now.toString(36).padStart(8, "0")}${suffix}`;
}

import { closeSync, openSync, readSync } from "node:fs";

/**
 * `length` random bytes from /dev/urandom, for names and ids (never secrets). Not
 * `crypto.getRandomValues`: under Node its first use compiles ~20 internal crypto modules, which a
 * run that needs nothing else of them paid at every start. Without /dev/urandom: Math.random.
 */
export function randomBytes(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let fd: number | undefined;
  try {
    fd = openSync("/dev/urandom", "r");
    if (readSync(fd, bytes, 0, length, null) === length) return bytes;
  } catch {
    // Math.random below
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  for (let i = 0; i < length; i++) bytes[i] = Math.floor(Math.random() * 256);
  return bytes;
}

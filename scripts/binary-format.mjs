// What a standalone binary is, read from its first bytes: the ELF e_machine or the Mach-O cputype.
// Used by scripts/release-check.mjs and test/e2e/binary/standalone.test.ts to check the binaries that cannot
// run on this host.
import { closeSync, openSync, readSync } from "node:fs";

/** The four release targets and the header each binary must carry. */
export const TARGET_FORMATS = {
  "linux-x64": "ELF x86-64",
  "linux-arm64": "ELF aarch64",
  "darwin-x64": "Mach-O x86_64",
  "darwin-arm64": "Mach-O arm64",
};

/** This machine's target, e.g. "linux-x64". */
export const HOST_TARGET = `${process.platform}-${process.arch === "arm64" ? "arm64" : "x64"}`;

/** "ELF x86-64", "ELF aarch64", "Mach-O x86_64", "Mach-O arm64", or a description of what else it is. */
export function binaryFormat(path) {
  const fd = openSync(path, "r");
  const header = Buffer.alloc(20);
  let length;
  try {
    length = readSync(fd, header, 0, 20, 0);
  } finally {
    closeSync(fd);
  }
  if (length < 20) return "unknown (shorter than a header)";
  if (header.readUInt32BE(0) === 0x7f454c46) {
    const machine = header.readUInt16LE(18);
    return `ELF ${machine === 0x3e ? "x86-64" : machine === 0xb7 ? "aarch64" : `machine ${machine}`}`;
  }
  if (header.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = header.readUInt32LE(4);
    return `Mach-O ${cpu === 0x01000007 ? "x86_64" : cpu === 0x0100000c ? "arm64" : `cputype ${cpu}`}`;
  }
  return "unknown (neither ELF nor 64-bit Mach-O)";
}

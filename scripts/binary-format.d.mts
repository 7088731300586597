// Types for scripts/binary-format.mjs (imported by test/e2e/binary/standalone.test.ts).
export declare const TARGET_FORMATS: Record<"linux-x64" | "linux-arm64" | "darwin-x64" | "darwin-arm64", string>;
export declare const HOST_TARGET: string;
export declare function binaryFormat(path: string): string;

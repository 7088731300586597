/** Workflow and script names (spec §2.1, §5.3): `[a-zA-Z0-9_][a-zA-Z0-9_-]*`, which also excludes `:`. */
const NAME_PATTERN = /^[a-zA-Z0-9_][a-zA-Z0-9_-]*$/;

export function isValidName(name: string): boolean {
  return NAME_PATTERN.test(name);
}

/** Supported script extensions (spec §2.1). `.mjs`/`.cjs` are deliberately absent. */
export const SCRIPT_EXTENSIONS = [".sh", ".js", ".jsx", ".ts", ".tsx"] as const;
export type ScriptExtension = (typeof SCRIPT_EXTENSIONS)[number];

/** Splits `name.ext` into base name and supported extension, or returns undefined for other files. */
export function splitScriptFileName(fileName: string): { base: string; ext: ScriptExtension } | undefined {
  const dot = fileName.lastIndexOf(".");
  if (dot < 0) return undefined;
  const ext = fileName.slice(dot);
  if (!(SCRIPT_EXTENSIONS as readonly string[]).includes(ext)) return undefined;
  return { base: fileName.slice(0, dot), ext: ext as ScriptExtension };
}

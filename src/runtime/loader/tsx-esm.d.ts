// tsx ships no types for its "tsx/esm" entry; in a module.register() hooks thread it exports
// Node's loader hooks (and registers nothing by itself).
declare module "tsx/esm" {
  export function initialize(data: unknown): Promise<void> | void;
  export function resolve(specifier: string, context: unknown, nextResolve: (specifier: string, context: unknown) => Promise<any>): Promise<any>;
  export function load(url: string, context: unknown, nextLoad: (url: string, context: unknown) => Promise<any>): Promise<any>;
}

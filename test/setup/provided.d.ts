// What the vitest configs give test files through `provide`, read there with `inject`.
import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** How many iterations the soak runs (test/e2e/run/soak.test.ts): 10,000 unless its project says otherwise. */
    soakIterations?: number;
  }
}

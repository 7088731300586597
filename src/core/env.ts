/** An environment as processes see it: `process.env`, or the one a script or hook is given. */
export type Env = Record<string, string | undefined>;

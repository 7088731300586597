import { LoopxError } from "../core/errors.js";

export interface InstallRequest {
  source: string;
  workflow?: string;
  yes: boolean;
  projectRoot: string;
}

export async function installFromCli(request: InstallRequest): Promise<number> {
  throw new LoopxError(`cannot install ${JSON.stringify(request.source)}: install is not available in this build yet`);
}

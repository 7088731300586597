/**
 * `loopx run --sandbox` on node, bun and the standalone binary: a fenced script writes in its
 * project, and cannot write $HOME or another project, read a planted ~/.ssh key, or connect to a
 * 127.0.0.1 port the policy does not name; the allowed port works; a `setsid` child is just as
 * fenced; loopx's helpers (`$LOOPX_BIN note|output`, `import "loopx"`) work inside; the proxy's
 * refusal is a record event; run.start names the fence.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLIS, linuxOnly, runCli, tempDir } from "../../helpers.js";
import { fencedProject, plantedEnv, recordEvents, SECRET, standIn } from "./support.js";

linuxOnly("--sandbox fences every script of the run", () => {
  describe.concurrent.each(CLIS)("$name", (cli) => {
    it("writes in the project only, reads no secret, connects to the allowed port only, setsid child included", async (context) => {
      const allowed = await standIn();
      const denied = await standIn();
      context.onTestFinished(() => (allowed.close(), denied.close()));
      const other = tempDir("loopx-other-project-");
      const project = fencedProject({ network: [`127.0.0.1:${allowed.port}`, "api.example.com:443"] });
      const env = plantedEnv({ OTHER_PROJECT: other, ALLOWED_PORT: String(allowed.port), DENIED_PORT: String(denied.port) });
      const result = await runCli(cli, ["run", "--sandbox", "w"], { cwd: project, env, timeoutMs: 60_000 });
      expect(result.code, result.stderr).toBe(0);
      expect(readFileSync(join(project, "written.txt"), "utf8")).toBe("inside\n");
      expect(existsSync(join(project, "escaped.txt")) ? readFileSync(join(project, "escaped.txt"), "utf8") : "").toBe("");
      expect(existsSync(join(env.HOME!, "outside"))).toBe(false);
      expect(existsSync(join(env.HOME!, "setsid-outside"))).toBe(false);
      expect(existsSync(join(other, "planted"))).toBe(false);
      expect(readFileSync(join(project, "setsid.txt"), "utf8")).toBe("done\n");
      expect(readFileSync(join(project, "allowed.txt"), "utf8")).toBe("pong");
      // The proxy refused the host the policy does not name: curl saw its 403.
      expect(readFileSync(join(project, "proxy.txt"), "utf8")).toBe("403");
      expect(readFileSync(join(project, "js.txt"), "utf8")).toBe("js ran");
      expect(result.stdout + result.stderr).not.toContain(SECRET);

      const events = recordEvents(env);
      const start = events.find((event) => event.type === "run.start")!;
      expect(start.sandbox).toMatchObject({ kind: "bwrap", version: expect.stringMatching(/^\d+\.\d+/), policyDigest: expect.stringMatching(/^[0-9a-f]{16}$/) });
      expect(start.options).toMatchObject({ sandbox: "on" });
      expect(events.filter((event) => event.type === "sandbox.denied")).toEqual([
        expect.objectContaining({ kind: "connect", target: "not-allowed.example:443", n: 1, script: "w:index" }),
      ]);
      expect(events.find((event) => event.type === "note")).toMatchObject({ text: "fenced note" });
      expect(events.at(-1)).toMatchObject({ type: "run.end", reason: "stopped", iterations: 2 });
      expect(result.stderr).toContain("the sandbox refused a connection to not-allowed.example:443 (w:index)");
    });
  });
});

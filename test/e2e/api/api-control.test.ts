/**
 * Steering and resuming through the API, under node and bun: a consumer program imports
 * the built package as `loopx`. A run of `runPromise()` is steerable by its id from another process
 * (pause holds the next script and keeps the program alive, continue, stop), and
 * `runPromise(target, { resume: id })` goes on with a run that died, as `loopx runs resume` does.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, RUNTIMES, isolatedEnv, makeProject, makeSymlink, processAlive, runCommand, sh, sleep, waitFor, waitForPid, type Runtime } from "../../helpers.js";
import { CHANNELS, events, loopx, recordIds, startLoopx, trace, waitForEvent } from "../../fixtures/control/support.js";

const WORKFLOWS = {
  // w's script ends only once <project>/hold-w is gone: a steering command always reaches it mid-script.
  ".loopx/w/index.sh": sh('echo "start $LOOPX_ITERATION" >> "$LOOPX_PROJECT_ROOT/trace.log"\nwhile [ -e "$LOOPX_PROJECT_ROOT/hold-w" ]; do sleep 0.05; done\necho "end $LOOPX_ITERATION" >> "$LOOPX_PROJECT_ROOT/trace.log"\necho "{\\"result\\":\\"iteration $LOOPX_ITERATION\\"}"'),
  // a hands 1 MiB to b by goto; b keeps it and waits while <project>/hold exists.
  ".loopx/p/index.sh": sh('head -c 786432 /dev/urandom | base64 -w0 > "$LOOPX_PROJECT_ROOT/payload.$LOOPX_ITERATION"\nprintf \'{"goto":"b","result":"%s"}\' "$(cat "$LOOPX_PROJECT_ROOT/payload.$LOOPX_ITERATION")"'),
  ".loopx/p/b.sh": sh('cat > "$LOOPX_PROJECT_ROOT/got.$LOOPX_ITERATION.$$"\necho "b $LOOPX_ITERATION $$" >> "$LOOPX_PROJECT_ROOT/trace.log"\necho $$ > "$LOOPX_PROJECT_ROOT/b.pid"\nwhile [ -e "$LOOPX_PROJECT_ROOT/hold" ]; do sleep 0.1; done\necho \'{"result":"ok"}\''),
};

function consumer(source: string, files: Record<string, string> = {}): string {
  const prelude = `import { run, runPromise } from "loopx";\nimport { writeFileSync } from "node:fs";\nconst report = (value) => console.log(JSON.stringify(value));\n`;
  const dir = makeProject({ "consumer.mjs": prelude + source, ...WORKFLOWS, ...files });
  makeSymlink(ROOT, join(dir, "node_modules", "loopx"));
  return dir;
}

const node = CHANNELS[0]!;

describe.each(RUNTIMES)("the API and the control channel ($name)", (runtime: Runtime) => {
  it("a runPromise() run is steerable by id: pause holds the next script (the program stays alive), continue, stop", async () => {
    const cwd = consumer(`const outputs = await runPromise("w", { onEvent: (e) => e.type === "run.start" && writeFileSync("id.txt", e.run) });\nreport(outputs.map((o) => o.result));`, { "hold-w": "" });
    const hold = join(cwd, "hold-w");
    const env = isolatedEnv();
    const program = runCommand(runtime.exe, ["consumer.mjs"], { cwd, env, timeoutMs: 60_000 });
    expect(await waitFor(() => existsSync(join(cwd, "id.txt")) && trace(cwd).length === 1, 20_000)).toBe(true);
    const id = readFileSync(join(cwd, "id.txt"), "utf8");
    expect(recordIds(env)).toEqual([]); // not recorded: found by its control channel alone
    expect(await loopx(node, ["runs", "pause", id.slice(0, 10)], cwd, env)).toMatchObject({ code: 0, stdout: `run ${id} pauses after w:index finishes (loopx runs continue ${id})\n` });
    rmSync(hold);
    expect(await waitFor(() => trace(cwd).length === 2, 10_000)).toBe(true);
    await sleep(1500);
    expect(trace(cwd)).toEqual(["start 1", "end 1"]);
    writeFileSync(hold, "");
    expect(await loopx(node, ["runs", "continue", id], cwd, env)).toMatchObject({ code: 0, stdout: `run ${id} continues\n` });
    expect(await waitFor(() => trace(cwd).length === 3, 10_000)).toBe(true);
    expect(await loopx(node, ["runs", "stop", id], cwd, env)).toMatchObject({ code: 0, stdout: `run ${id} stops after w:index finishes\n` });
    rmSync(hold);
    const result = await program;
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(result.stdout)).toEqual(["iteration 1", "iteration 2"]);
    expect(trace(cwd)).toEqual(["start 1", "end 1", "start 2", "end 2"]);
  });

  it("runPromise(target, { resume: id }): the run killed at b goes on (same bytes, iterations counted on, one record); refusals reject with one line", async () => {
    const cwd = consumer(
      `const id = process.argv[2];
       const refused = [];
       for (const [target, options] of [["p", { resume: "zzz" }], ["w", { resume: id }]]) {
         try { await runPromise(target, options); } catch (error) { refused.push(error.message); }
       }
       const outputs = await runPromise("p", { resume: id.slice(0, 9), onEvent: (e) => e.type === "run.resume" && writeFileSync("resumed.json", JSON.stringify(e)) });
       report({ refused, results: outputs.map((o) => o.result?.length) });`,
      { hold: "" },
    );
    const env = isolatedEnv();
    const run = startLoopx(node, ["run", "-n", "4", "p"], cwd, env);
    const id = await waitForEvent(env, (event) => event.type === "iteration.start" && event.n === 2);
    const b = await waitForPid(join(cwd, "b.pid"));
    run.child.kill("SIGKILL");
    await waitFor(() => run.child.signalCode !== null, 5000);
    process.kill(-b, "SIGKILL");
    await run.result;
    await waitFor(() => !processAlive(b), 5000);
    await runCommand("rm", [join(cwd, "hold")], { cwd });

    const result = await runCommand(runtime.exe, ["consumer.mjs", id], { cwd, env, timeoutMs: 60_000 });
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const { refused, results } = JSON.parse(result.stdout);
    expect(refused[0]).toMatch(/^no run "zzz" in /);
    expect(refused[1]).toBe(`run ${id} runs p:index, not w`);
    expect(results).toEqual([2, 1024 * 1024, 2]);
    const lines = trace(cwd).map((line) => line.split(" "));
    expect(lines.map((line) => `${line[0]} ${line[1]}`)).toEqual(["b 2", "b 2", "b 4"]);
    expect(readFileSync(join(cwd, `got.2.${lines[1]![2]}`)).equals(readFileSync(join(cwd, "payload.1")))).toBe(true);
    expect(JSON.parse(readFileSync(join(cwd, "resumed.json"), "utf8"))).toMatchObject({ run: id, target: "p:b", iterations: 1, maxIterations: 4 });
    expect(recordIds(env)).toEqual([id]);
    expect(events(env, id).at(-1)).toMatchObject({ type: "run.end", reason: "limit", iterations: 4 });
  });
});

describe("the control channel as a module (the dashboard's): createControlChannel", () => {
  it("stop/pause/continue answer in words, refusals reject with the one line; resume starts the run detached and answers once it has resumed", async () => {
    const { createControlChannel } = (await import(join(ROOT, "dist", "control", "client.js"))) as typeof import("../../../src/control/client.js");
    const cwd = makeProject({ ...WORKFLOWS, fail: "" });
    const env = isolatedEnv();
    const channel = createControlChannel(env);
    await expect(channel.pause("zzz")).rejects.toThrow(/^no run "zzz" in /);
    const failing = { ".loopx/f/index.sh": sh('if [ -e "$LOOPX_PROJECT_ROOT/fail" ]; then exit 3; fi\necho "resumed $LOOPX_ITERATION $$" >> "$LOOPX_PROJECT_ROOT/trace.log"\necho \'{"stop":true}\'') };
    makeProject(failing, cwd);
    expect((await loopx(node, ["run", "f"], cwd, env)).code).toBe(1);
    const id = recordIds(env)[0]!;
    await expect(channel.stop(id, { now: false })).rejects.toThrow(`run ${id} has ended (f:index exited with code 3)`);
    await runCommand("rm", [join(cwd, "fail")], { cwd });
    const answer = await channel.resume(id.slice(0, 9));
    const pid = Number(/\(pid (\d+), detached\)$/.exec(answer)?.[1]);
    expect(answer).toMatch(new RegExp(`^run ${id} resumed at f:index, iteration 1 \\(pid \\d+, detached\\)$`));
    expect(await waitFor(() => events(env, id).at(-1)?.type === "run.end" && events(env, id).length > 5, 20_000)).toBe(true);
    expect(events(env, id).at(-1)).toMatchObject({ reason: "stopped" });
    expect(trace(cwd)).toEqual([`resumed 1 ${trace(cwd)[0]!.split(" ")[2]}`]);
    await waitFor(() => !processAlive(pid), 5000);
    await expect(channel.resume(id)).rejects.toThrow(`run ${id} was stopped by f:index: nothing to resume`);
  });
});

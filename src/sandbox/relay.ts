/**
 * The relay inside the fence (its source, written to the sandbox's directory and run by the
 * runtime that runs loopx's JS scripts): it listens on the allowed ports of the fence's loopback,
 * carries each connection through its Unix socket (bridge.ts), then runs the script as its child
 * — in the same process group, so loopx's signals reach both — and ends as the script ended. It
 * ignores the signals loopx forwards to the group (the script gets them too) and goes once the
 * script is gone. Its argument: JSON {forwards, env, unset}; the script's command line follows.
 */
export const RELAY_SOURCE = `import { connect, createServer } from "node:net";
import { spawn } from "node:child_process";
const spec = JSON.parse(process.argv[2]);
const [command, ...args] = process.argv.slice(3);
const listen = ({ port, socket }) => new Promise((resolve, reject) => {
  const server = createServer((inner) => {
    const outer = connect(socket);
    for (const [a, b] of [[inner, outer], [outer, inner]]) {
      a.on("error", () => b.destroy());
      a.pipe(b);
    }
  });
  server.once("error", reject);
  server.listen(port, "127.0.0.1", () => resolve(server));
});
let servers;
try {
  servers = await Promise.all(spec.forwards.map(listen));
} catch (error) {
  process.stderr.write("loopx sandbox: the relay cannot listen inside the fence: " + error.message + "\\n");
  process.exit(126);
}
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
for (const signal of SIGNALS) process.on(signal, () => {});
const env = { ...process.env, ...spec.env };
for (const name of spec.unset) delete env[name];
const child = spawn(command, args, { stdio: "inherit", env });
child.on("error", (error) => {
  process.stderr.write(command + ": " + error.message + "\\n");
  process.exit(127);
});
child.on("exit", (code, signal) => {
  for (const server of servers) server.close();
  if (signal === null) process.exit(code ?? 1);
  for (const name of SIGNALS) process.removeAllListeners(name);
  process.kill(process.pid, signal);
  setTimeout(() => process.exit(128), 1000);
});
`;

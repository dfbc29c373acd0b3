// dvergr's forwarder, run by deno inside a command candidate's sandbox (no network of its
// own): listens on 127.0.0.1 ports and relays each connection to a Unix socket of the
// attempt's world gateway, then runs the candidate's command and exits with its status.
// The ports listen before the command starts, so the candidate never races them.
// Arguments: MODEL_PORT MODEL_SOCKET MCP_PORT MCP_SOCKET -- COMMAND ARGS…
// Permissions: --allow-net=127.0.0.1:MODEL_PORT,127.0.0.1:MCP_PORT, read and write of the
// sockets' directory, --allow-run of the command.
const args = Deno.args;
const sep = args.indexOf("--");
if (sep !== 4 || args.length < 6) {
  // deno-lint-ignore no-console -- the forwarder is a process of its own; stderr is its only voice
  console.error("dvergr forwarder: usage: MODEL_PORT MODEL_SOCK MCP_PORT MCP_SOCK -- CMD…");
  Deno.exit(125);
}

function close(c) {
  try {
    c.close();
  } catch {
    // already closed
  }
}

async function relay(conn, path) {
  let up;
  try {
    up = await Deno.connect({ transport: "unix", path });
  } catch {
    close(conn);
    return;
  }
  // When either side ends, both go: HTTP clients here never half-close.
  const a = conn.readable.pipeTo(up.writable, { preventClose: true }).catch(() => {});
  const b = up.readable.pipeTo(conn.writable, { preventClose: true }).catch(() => {});
  await Promise.race([a, b]);
  close(conn);
  close(up);
}

function listen(port, path) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: Number(port) });
  (async () => {
    for await (const conn of listener) relay(conn, path);
  })();
}

listen(args[0], args[1]);
listen(args[2], args[3]);
const [cmd, ...rest] = args.slice(5);
const child = new Deno.Command(cmd, {
  args: rest,
  stdin: "inherit",
  stdout: "inherit",
  stderr: "inherit",
}).spawn();
const status = await child.status;
const SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 };
Deno.exit(status.signal ? 128 + (SIGNALS[status.signal] ?? 1) : status.code);

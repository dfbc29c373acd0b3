// dvergr's forwarder, run by deno inside a command candidate's sandbox (no network of its
// own) where the system has no socat: listens on a 127.0.0.1 port and relays each connection
// to the Unix socket of the attempt's world gateway, until the sandbox ends. The sandbox waits
// until the port listens before the candidate's command starts.
// Arguments: PORT SOCKET
// Permissions: --allow-net=127.0.0.1:PORT,unix:SOCKET, read and write of the socket's
// directory.
const args = Deno.args;
if (args.length !== 2) {
  // deno-lint-ignore no-console -- the forwarder is a process of its own; stderr is its only voice
  console.error("dvergr forwarder: usage: PORT SOCKET");
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

async function listen(port, path) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: Number(port) });
  for await (const conn of listener) relay(conn, path);
}

await listen(args[0], args[1]);

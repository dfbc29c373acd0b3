/**
 * The guard against the `postgres` driver's write to a connection it has already closed: that
 * uncaught error (thrown from the driver's nextWrite in a setImmediate) no longer ends the
 * process, and any other uncaught error still does. The driver's code is stood in for by a
 * module at the same place in a package tree (postgres/src/connection.js), whose nextWrite
 * writes to a socket that is null, as the driver's does after closed().
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { isClosedSocketWrite } from "../../../../adapters/store/postgres/closed_socket_guard.ts";

const GUARD = fileURLToPath(
  new URL("../../../../adapters/store/postgres/closed_socket_guard.ts", import.meta.url),
);

const DRIVER = `let socket = null;
export function write() { setImmediate(nextWrite); }
function nextWrite(fn) { const x = socket.write(new Uint8Array(1), fn); return x; }
export function other() { setImmediate(() => socket.end()); }
`;

async function runWith(call: "write" | "other"): Promise<{ code: number; out: string }> {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/postgres/src`, { recursive: true });
    await Deno.writeTextFile(`${dir}/postgres/src/connection.js`, DRIVER);
    await Deno.writeTextFile(
      `${dir}/main.ts`,
      `import { guardClosedSocketWrites } from ${JSON.stringify(GUARD)};
import { ${call} } from "./postgres/src/connection.js";
import { setImmediate } from "node:timers";
globalThis.setImmediate = setImmediate;
guardClosedSocketWrites();
${call}();
await new Promise((r) => setTimeout(r, 50));
console.log("alive");
`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-lock", "--allow-read", `${dir}/main.ts`],
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { code: out.code, out: new TextDecoder().decode(out.stdout) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("the driver's write to a closed connection no longer ends the process", async () => {
  const r = await runWith("write");
  assert.equal(r.code, 0);
  assert.equal(r.out.trim(), "alive");
});

Deno.test("any other uncaught error still ends the process", async () => {
  const r = await runWith("other");
  assert.notEqual(r.code, 0);
  assert.equal(r.out.trim(), "");
});

Deno.test("isClosedSocketWrite() knows the driver's error by its message and its place", () => {
  const at = (file: string, fn = "nextWrite") =>
    Object.assign(new TypeError("Cannot read properties of null (reading 'write')"), {
      stack: `TypeError: Cannot read properties of null (reading 'write')\n` +
        `    at ${fn} (file:///x/node_modules/.deno/postgres@3.4.9/node_modules/${file}:255:22)`,
    });
  assert.equal(isClosedSocketWrite(at("postgres/src/connection.js")), true);
  assert.equal(isClosedSocketWrite(at("postgres/src/connection.js", "Immediate.nextWrite")), true);
  assert.equal(isClosedSocketWrite(at("other/src/connection.js")), false);
  assert.equal(isClosedSocketWrite(at("postgres/src/connection.js", "write")), false);
  assert.equal(isClosedSocketWrite(new TypeError("x is null")), false);
  assert.equal(isClosedSocketWrite("Cannot read properties of null (reading 'write')"), false);
});

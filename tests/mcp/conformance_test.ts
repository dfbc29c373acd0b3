/**
 * The official MCP conformance runner (`@modelcontextprotocol/conformance`, pinned) against
 * `dvergr serve --mcp --http`: every server scenario that applies to a server without
 * test-specific tools, prompts or resources (the others call `test_*` tools, `test://`
 * resources and `test_*` prompts dvergr does not have; completion-complete asks for a
 * `test_prompt_with_arguments` and passes on the empty completion an unknown prompt gets).
 * Any failed check fails the test.
 *
 * The runner is installed with npm into a cache directory on first use (CI: .ci/run does it
 * first). Its client sends no bearer token, so it talks to the server through a loopback
 * proxy that adds one, as a host that puts a proxy in front of dvergr does; the proxy passes
 * Host and Origin on, so the DNS rebinding scenario reaches our checks.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHttp } from "./helpers.ts";

/** The pinned runner. */
export const CONFORMANCE_PACKAGE = "@modelcontextprotocol/conformance";
export const CONFORMANCE_VERSION = "0.1.16";

/** Server scenarios that apply to dvergr (no test-specific tools, prompts or resources). */
const SCENARIOS = [
  "server-initialize",
  "ping",
  "logging-set-level",
  "tools-list",
  "resources-list",
  "prompts-list",
  "completion-complete",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
];

/** Where the runner is installed: $DVERGR_CONFORMANCE_DIR, else a directory in the temp dir. */
export function conformanceDir(): string {
  return Deno.env.get("DVERGR_CONFORMANCE_DIR") ??
    join(tmpdir(), `dvergr-conformance-${CONFORMANCE_VERSION}`);
}

/** The runner's entry point, installed (npm) when it is not there yet. */
export async function ensureConformance(dir = conformanceDir()): Promise<string> {
  const pkg = join(dir, "node_modules", ...CONFORMANCE_PACKAGE.split("/"));
  try {
    const version = JSON.parse(await Deno.readTextFile(join(pkg, "package.json"))).version;
    if (version === CONFORMANCE_VERSION) return join(pkg, "dist", "index.js");
  } catch {
    // Not installed yet.
  }
  // Installed beside, then renamed: two test runs at once never see half an install.
  const tmp = `${dir}.tmp-${crypto.randomUUID()}`;
  await Deno.mkdir(tmp, { recursive: true });
  const out = await new Deno.Command("npm", {
    args: [
      "install",
      "--prefix",
      tmp,
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      `${CONFORMANCE_PACKAGE}@${CONFORMANCE_VERSION}`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
    throw new Error(`npm install failed:\n${new TextDecoder().decode(out.stderr)}`);
  }
  await Deno.rename(tmp, dir).catch(async (e) => {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
    if (!(e instanceof Deno.errors.AlreadyExists) && !/not empty/i.test(String(e))) throw e;
  });
  return join(pkg, "dist", "index.js");
}

/** A loopback proxy to `port` that adds the bearer token and passes every other header on. */
function authProxy(port: number, token: string): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const up = http.request({
      host: "127.0.0.1",
      port,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, authorization: `Bearer ${token}` },
    }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(up);
    res.on("close", () => up.destroy());
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const addr = server.address() as { port: number };
      resolve({
        port: addr.port,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/** Every checks.json under the runner's output directory. */
async function readChecks(dir: string): Promise<Map<string, Check[]>> {
  const out = new Map<string, Check[]>();
  for await (const e of Deno.readDir(dir)) {
    if (!e.isDirectory) continue;
    const text = await Deno.readTextFile(join(dir, e.name, "checks.json"));
    out.set(e.name, JSON.parse(text));
  }
  return out;
}

Deno.test({
  name: "the official MCP conformance server scenarios pass against dvergr serve --mcp --http",
  // The runner keeps sockets and timers of its own scenarios; it runs in a child process.
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const entry = await ensureConformance();
    const home = await Deno.makeTempDir({ prefix: "dvergr-conformance-" });
    const results = await Deno.makeTempDir({ prefix: "dvergr-conformance-out-" });
    const server = await startHttp(home);
    const proxy = await authProxy(server.port, server.token);
    try {
      for (const scenario of SCENARIOS) {
        const run = await new Deno.Command(Deno.execPath(), {
          args: [
            "run",
            "--allow-read",
            "--allow-write",
            "--allow-env",
            "--allow-net=127.0.0.1,localhost",
            "--allow-sys",
            "--no-prompt",
            entry,
            "server",
            "--url",
            `http://localhost:${proxy.port}/mcp`,
            "--scenario",
            scenario,
            "-o",
            join(results, scenario),
          ],
          cwd: results,
          stdout: "piped",
          stderr: "piped",
        }).output();
        const text = new TextDecoder().decode(run.stdout) + new TextDecoder().decode(run.stderr);
        const checks = [...(await readChecks(join(results, scenario))).values()].flat();
        const failed = checks.filter((c) => c.status === "FAILURE");
        assert.ok(
          checks.some((c) => c.status === "SUCCESS"),
          `${scenario}: no check passed\n${text}`,
        );
        assert.deepEqual(
          failed.map((c) => `${c.id}: ${c.errorMessage}`),
          [],
          `${scenario} failed\n${text}\n${server.stderr()}`,
        );
        assert.equal(run.code, 0, `${scenario}: the runner exited ${run.code}\n${text}`);
      }
    } finally {
      await proxy.close();
      await server.stop();
      await Deno.remove(home, { recursive: true }).catch(() => {});
      await Deno.remove(results, { recursive: true }).catch(() => {});
    }
  },
});

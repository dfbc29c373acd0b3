/**
 * MCP test helpers: `dvergr serve --mcp` as a child process (stdio or HTTP), the SDK's
 * client on it, and the seed's "Over MCP, from scratch" flow with its checks.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { toolProblems } from "../../mcp/tool_schema.ts";
import { openHome } from "../../adapters/store/kv/home.ts";
import { allOps } from "../../core/ops/registry.ts";
import { serveHttp } from "../../mcp/http.ts";
import { createMcpServer } from "../../mcp/server.ts";
import { selectTools } from "../../mcp/selection.ts";
import { createCheckerPool } from "../../sandbox/checker_pool.ts";
import { DVERGR_PERMISSIONS } from "../../core/permissions.ts";
import { composeServices } from "../../adapters/compose.ts";

/** A handshake-era `initialize` request for `version` (with `_meta` when given). */
export function initialize(version: string, id = 1, meta?: Record<string, unknown>) {
  return {
    jsonrpc: "2.0" as const,
    id,
    method: "initialize",
    params: {
      protocolVersion: version,
      capabilities: {},
      clientInfo: { name: "raw", version: "0" },
      ...(meta ? { _meta: meta } : {}),
    },
  };
}

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** dvergr's own permissions (deno.json's task). */
export const PERMS = [...DVERGR_PERMISSIONS];

/** The argv that runs `dvergr serve --mcp …` under Deno. */
export function serveArgs(home: string, extra: string[] = []): string[] {
  return ["run", ...PERMS, `${ROOT}main.ts`, "serve", "--mcp", "--home", home, ...extra];
}

export interface Connected {
  client: Client;
  /** What the server wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

/** Starts `dvergr serve --mcp` over stdio and connects the SDK client to it. */
export async function connectStdio(home: string, extra: string[] = []): Promise<
  Connected & { pid: number }
> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: serveArgs(home, extra),
    cwd: ROOT,
    env: Deno.env.toObject(),
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (d: Uint8Array | string) => {
    err += typeof d === "string" ? d : new TextDecoder().decode(d);
  });
  const client = new Client({ name: "dvergr-test", version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    pid: transport.pid!,
    stderr: () => err,
    close: () => client.close(),
  };
}

export interface HttpChild {
  url: string;
  port: number;
  token: string;
  child: Deno.ChildProcess;
  stderr(): string;
  /** SIGTERM, then waits for the exit status. */
  stop(): Promise<Deno.CommandStatus>;
}

/** Starts `dvergr serve --mcp --http --port 0` and waits until it listens (at most 30 s). */
export async function startHttp(home: string, extra: string[] = []): Promise<HttpChild> {
  const child = new Deno.Command(Deno.execPath(), {
    args: serveArgs(home, ["--http", "--port", "0", ...extra]),
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let err = "";
  let out = "";
  const listening = Promise.withResolvers<string>();
  (async () => {
    const dec = new TextDecoder();
    for await (const chunk of child.stderr) {
      err += dec.decode(chunk, { stream: true });
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err);
      if (m) listening.resolve(m[1]);
    }
    listening.reject(new Error(`The server ended before listening:\n${err}`));
  })();
  (async () => {
    for await (const chunk of child.stdout) out += new TextDecoder().decode(chunk);
  })();
  const timer = setTimeout(() => listening.reject(new Error("Not listening after 30 s")), 30_000);
  let url: string;
  try {
    url = await listening.promise;
  } catch (e) {
    child.kill("SIGKILL");
    await child.status;
    throw e;
  } finally {
    clearTimeout(timer);
  }
  const token = (await Deno.readTextFile(`${home}/mcp/http-token`)).trim();
  return {
    url,
    port: Number(new URL(url).port),
    token,
    child,
    stderr: () => err + (out ? `\n[stdout]\n${out}` : ""),
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        // Already ended.
      }
      return await child.status;
    },
  };
}

/** Connects the SDK client over Streamable HTTP with the bearer token. */
export async function connectHttp(url: string, token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "dvergr-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

// deno-lint-ignore no-explicit-any
export type Json = any;

/** Calls a tool and returns its structured result; fails the test on an error result. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  onprogress?: (p: { progress: number; total?: number; message?: string }) => void,
): Promise<Json> {
  const r = await client.callTool({ name, arguments: args }, undefined, {
    ...(onprogress ? { onprogress } : {}),
    timeout: 60_000,
  });
  const text = (r.content as { type: string; text: string }[])[0]?.text ?? "";
  assert.ok(!r.isError, `${name} failed: ${text}`);
  assert.deepEqual(JSON.parse(text), r.structuredContent, "text and structuredContent agree");
  return r.structuredContent;
}

/** Calls a tool that must fail and returns its error ({code, message, hint}). */
export async function callError(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<Json> {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, true, `${name} should have failed`);
  return (r.structuredContent as Json).error;
}

export const BOOKINGS_CSV = [
  "no;vendor;text;account;amount",
  "1;ACME GmbH;Copy paper;4930;12,50",
  "2;Shell;Diesel;4530;40,00",
  "3;Hausverwaltung;Office rent;4210;900,00",
  "4;Telekom;Phone;4920;39,95",
  "5;Telekom;Internet;4920;",
].join("\n") + "\n";

export const BOOKINGS_SPEC =
  '{:id "no" :inputs ["vendor" "text"] :title "Invoice coding" :expected {"account" {:rule :exact} "amount" {:rule :number :tolerance 0.01}}}';

/**
 * The seed's "Over MCP, from scratch" flow, steps 1–7, checked at every step: room_create,
 * room_write a CSV, catalog_cases, room_files, catalog_calibrate, catalog_benchmark (with a
 * progress token), job_status until it ends, scorecard_list, scorecard_detail,
 * experiment_report. Returns the experiment id.
 */
export async function fromScratchFlow(client: Client, room = "books"): Promise<string> {
  const { tools } = await client.listTools();
  for (const t of tools) {
    assert.deepEqual(toolProblems(t as Json), [], `tool ${t.name} keeps the rules`);
  }

  // The seed's own argument shapes.
  const created = await call(client, "room_create", { title: "Books", slug: room });
  assert.equal(created.created, true);
  const written = await call(client, "room_write", {
    room,
    files: { "data/cases.csv": { text: BOOKINGS_CSV } },
    message: "Cases from 2025",
  });
  assert.deepEqual(written.written, ["data/cases.csv"]);

  const cases = await call(client, "catalog_cases", {
    room,
    name: "invoice-coding",
    table: "/data/cases.csv",
    spec: BOOKINGS_SPEC,
  });
  assert.equal(cases.cases, 5);
  assert.equal(cases.certified, 4);
  assert.deepEqual(cases.excluded.map((e: Json) => e.id), ["5"]);

  const files = await call(client, "room_files", { room, prefix: "workflows/invoice-coding" });
  const paths = files.files.map((f: Json) => f.path);
  assert.ok(paths.includes("workflows/invoice-coding/certification.edn"));
  assert.ok(paths.includes("workflows/invoice-coding/cases/4/gold.edn"));

  const cal = await call(client, "catalog_calibrate", { room, name: "invoice-coding" });
  assert.equal(cal.ok, true, JSON.stringify(cal.problems));

  // The benchmark job runs in a process of its own: a subscription to the room's progress
  // hears of its cells, and the job's progress comes as log messages.
  const updates: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri);
  });
  const jobLogs: Json[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    if (n.params.logger === "dvergr.job") jobLogs.push(n.params.data);
  });
  await client.setLoggingLevel("info");
  await client.subscribeResource({ uri: `experiment://${room}/progress` });
  const progressed: number[] = [];
  // The SDK client drops a progress notification it handles after the call's response
  // (both can arrive in one chunk, the notification a microtask later) and reports it to
  // onerror as one for an unknown token: it was still sent, so it counts.
  const previousOnerror = client.onerror;
  client.onerror = (e) => {
    const m = /unknown token: (.*)$/s.exec(e.message);
    if (m) progressed.push(JSON.parse(m[1]).params.progress);
    else previousOnerror?.(e);
  };
  const started = await call(client, "catalog_benchmark", {
    room,
    name: "invoice-coding",
    candidates: ["builtin:reference", "builtin:noop"],
  }, (p) => progressed.push(p.progress));
  assert.equal(started.status, "running");
  assert.equal(started.cells, 8);
  assert.match(started.experiment, /^[0-9a-f-]{36}$/);
  // The notification may be handled a little after the response.
  for (let i = 0; i < 50 && progressed.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  client.onerror = previousOnerror;
  assert.ok(progressed.length >= 1, "a progress notification for the job start");

  let status: Json;
  for (let i = 0; i < 40; i++) {
    status = await call(client, "job_status", { job: started.job, wait_ms: 25_000 });
    if (status.status !== "running") break;
  }
  assert.equal(status.status, "succeeded", JSON.stringify(status));
  assert.deepEqual(status.progress, { done: 8, total: 8, faults: 0, phase: "done" });
  for (let i = 0; i < 100 && !jobLogs.some((d) => d.status === "succeeded"); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(updates.length >= 1, "updates of the room's progress while the job ran");
  assert.ok(updates.every((u) => u === `experiment://${room}/progress`));
  assert.ok(
    jobLogs.some((d) => d.job === started.job && d.status === "succeeded"),
    `the job's end as a log message: ${JSON.stringify(jobLogs)}`,
  );
  await client.unsubscribeResource({ uri: `experiment://${room}/progress` });
  assert.equal(status.result.experiment, started.experiment);

  const list = await call(client, "scorecard_list", { room });
  assert.equal(list.experiments[0].experiment, started.experiment);
  assert.deepEqual(
    list.experiments[0].leaderboard.map((l: Json) => [l.candidate, l.meanReward, l.passes]),
    [["builtin:reference", 1, 4], ["builtin:noop", 0, 0]],
  );

  const detail = await call(client, "scorecard_detail", { room, experiment: started.experiment });
  assert.equal(detail.scorecard.complete, true);
  assert.equal(detail.scorecard.baseline, "builtin:reference");
  assert.equal(detail.scorecard.comparisons[0].candidate, "builtin:noop");

  const report = await call(client, "experiment_report", { room, experiment: started.experiment });
  assert.match(report.markdown, /^# Invoice coding\n/);
  assert.ok(report.markdown.includes("builtin:noop"));
  return started.experiment;
}

/** serveHttp() in this process (default tool selection, a checker pool) on a fresh home. */
export async function withHttp(
  f: (http: { port: number; url: string }, token: string) => Promise<void>,
): Promise<void> {
  const home = await openHome(await Deno.makeTempDir({ prefix: "dvergr-http-" }));
  const context = {
    home,
    services: composeServices(),
    runner: createCheckerPool({ workers: 1 }),
    env: () => undefined,
    cwd: Deno.cwd(),
    clock: () => new Date(),
  };
  const token = "t".repeat(64);
  const http = serveHttp({
    port: 0,
    token,
    makeServer: () =>
      createMcpServer({ context, selection: selectTools(allOps(), {}), log: () => {} }),
    log: () => {},
  });
  try {
    await f(http, token);
  } finally {
    await http.close();
    context.runner.close();
    await home.close();
    await Deno.remove(home.dir, { recursive: true });
  }
}

/**
 * Fuzzing the surfaces users and clients feed: bundles (`check`, `calibrate`), tables
 * (`cases`), exports (`import`) and raw HTTP requests to the MCP server. Inputs are
 * mutations of valid ones, drawn from a fixed seed (DVERGR_FUZZ_SEED) in a bounded number
 * (DVERGR_FUZZ_COUNT per target), so a failure reproduces. Any exit 3, stack trace or
 * HTTP 500 fails the test with the input that caused it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { memoryContext } from "../cli/context.ts";
import { runMain } from "../main.ts";
import { initialize, withHttp } from "./mcp/helpers.ts";
import { seededRandom } from "../core/seeded_random.ts";

const SEED = Number(Deno.env.get("DVERGR_FUZZ_SEED") ?? 20261201);
const COUNT = Number(Deno.env.get("DVERGR_FUZZ_COUNT") ?? 60);
const EXAMPLES = new URL("../examples/", import.meta.url).pathname;

/** Pieces that tend to break parsers: brackets, quotes, separators, odd characters, numbers. */
const NASTY = [
  "{",
  "}",
  "[",
  "]",
  "(",
  '"',
  "\\",
  "#",
  "##NaN",
  "##Inf",
  ":",
  ";",
  ",",
  "\t",
  "\n",
  "\r\n",
  "\0",
  "\u2028",
  "\ud800",
  "\ufeff",
  "é",
  "🙂",
  "1e400",
  "12345678901234567000",
  "-0",
  "9".repeat(400),
  "[".repeat(5000),
  "{:a ".repeat(2000),
  '#inst "x"',
  '#uuid "nope"',
  "../",
  "/etc/passwd",
  ".git/",
  "x".repeat(70_000),
];

function mutate(text: string, next: () => number): string {
  const pick = <T>(xs: T[]) => xs[Math.floor(next() * xs.length)];
  let s = text;
  const edits = 1 + Math.floor(next() * 4);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(next() * (s.length + 1));
    switch (Math.floor(next() * 5)) {
      case 0: // insert something nasty
        s = s.slice(0, at) + pick(NASTY) + s.slice(at);
        break;
      case 1: // delete a slice
        s = s.slice(0, at) + s.slice(at + Math.floor(next() * 40));
        break;
      case 2: // duplicate a slice
        s = s.slice(0, at) + s.slice(at, at + Math.floor(next() * 60)) + s.slice(at);
        break;
      case 3: // truncate
        s = s.slice(0, at);
        break;
      default: // replace one character
        s = s.slice(0, at) + String.fromCharCode(Math.floor(next() * 0x3000)) + s.slice(at + 1);
    }
  }
  return s;
}

async function dvergr(cwd: string, args: string[]) {
  const ctx = memoryContext({ cwd, env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" } });
  const code = await runMain(args, ctx);
  return { code, out: ctx.out.join(""), err: ctx.err.join("") };
}

/** No exit 3, no stack trace, no "internal error" for `what`. */
function assertHandled(
  r: { code: number; out: string; err: string },
  what: string,
  allowed: number[],
): void {
  const text = r.err + r.out;
  const trace = /internal error|\n\s+at [^\n]*:\d+:\d+/.test(text);
  assert.ok(
    allowed.includes(r.code) && !trace,
    `${what}: exit ${r.code}\n${text.slice(0, 1500)}`,
  );
}

async function readDir(dir: string, prefix = ""): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const e of Deno.readDir(join(dir, prefix))) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory) { for (const [k, v] of await readDir(dir, rel)) out.set(k, v); }
    else out.set(rel, await Deno.readTextFile(join(dir, rel)));
  }
  return out;
}

async function writeFiles(dir: string, files: Map<string, string>): Promise<void> {
  for (const [p, text] of files) {
    const full = join(dir, p);
    await Deno.mkdir(join(full, ".."), { recursive: true });
    await Deno.writeTextFile(full, text);
  }
}

Deno.test("fuzz: mutated bundles never make check or calibrate exit 3", async () => {
  const next = seededRandom(SEED);
  const base = await readDir(join(EXAMPLES, "workflows/meeting-actions"));
  const names = [...base.keys()];
  const root = await Deno.makeTempDir({ prefix: "dvergr-fuzz-bundle-" });
  try {
    for (let i = 0; i < COUNT; i++) {
      const files = new Map(base);
      const target = names[Math.floor(next() * names.length)];
      files.set(target, mutate(files.get(target)!, next));
      if (next() < 0.15) {
        // A weird extra path: a file where a directory is, an alias of .git, a long name.
        const extra = ["fixtures/docs", "fixtures/.git./x", "fixtures/" + "n".repeat(300)][
          Math.floor(next() * 3)
        ];
        files.set(extra, "x");
      }
      const dir = join(root, `b${i}`, "meeting-actions");
      try {
        await writeFiles(dir, files);
      } catch {
        continue; // the file system refused the name itself: nothing to feed dvergr
      }
      const cmd = next() < 0.2 ? "calibrate" : "check";
      assertHandled(await dvergr(root, [cmd, dir]), `${cmd} (seed ${SEED}, #${i}, ${target})`, [
        0,
        1,
        2,
      ]);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("fuzz: mutated tables never make cases exit 3", async () => {
  const next = seededRandom(SEED + 1);
  const csv = "id;text;amount;account\nB1;Miete Mai;1.200,00;4210\nB2;Strom;89,50;4240\n" +
    'B3;"Büro; Papier";19,99;4930\nB4;Miete Juni;1.200,00;4210\n';
  const jsonl = '{"id": "B1", "text": "Miete", "amount": 1200, "account": "4210"}\n' +
    '{"id": 2, "text": ["a", {"b": null}], "amount": 1.5e3, "account": 4240}\n';
  const edn = '[{:id "B1" :text "Miete" :amount 1200.0 :account "4210"} ' +
    '{:id :B2 :text #{"a"} :amount 12M :account 4240}]';
  const root = await Deno.makeTempDir({ prefix: "dvergr-fuzz-table-" });
  try {
    for (let i = 0; i < COUNT; i++) {
      const [name, text] = ([["t.csv", csv], ["t.jsonl", jsonl], ["t.edn", edn]] as const)[i % 3];
      await Deno.writeTextFile(join(root, name), mutate(text, next));
      const r = await dvergr(root, [
        "cases",
        name,
        "--id",
        "id",
        "--inputs",
        "text,amount",
        "--outcome",
        next() < 0.5 ? "account:exact" : "account:number",
        "--out",
        `out${i}`,
      ]);
      assertHandled(r, `cases ${name} (seed ${SEED + 1}, #${i})`, [0, 1, 2]);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("fuzz: mutated exports never make import exit 3", async () => {
  const next = seededRandom(SEED + 2);
  const root = await Deno.makeTempDir({ prefix: "dvergr-fuzz-export-" });
  try {
    const made = await dvergr(root, [
      "export",
      join(EXAMPLES, "workflows/meeting-actions"),
      "-o",
      "e.edn",
    ]);
    assert.equal(made.code, 0, made.err);
    const text = await Deno.readTextFile(join(root, "e.edn"));
    for (let i = 0; i < COUNT; i++) {
      await Deno.writeTextFile(join(root, `m${i}.edn`), mutate(text, next));
      const r = await dvergr(root, ["import", `m${i}.edn`, "--dir", `d${i}`]);
      assertHandled(r, `import (seed ${SEED + 2}, #${i})`, [0, 2]);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

/** Sends raw bytes to the server and returns the status of its answer (0: none). */
async function rawStatus(port: number, request: string): Promise<number> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode(request));
    const buf = new Uint8Array(4096);
    let got = "";
    const deadline = Date.now() + 10_000;
    while (!got.includes("\r\n") && Date.now() < deadline) {
      const n = await conn.read(buf);
      if (n === null) break;
      got += new TextDecoder().decode(buf.subarray(0, n));
    }
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(got);
    return m ? Number(m[1]) : 0;
  } finally {
    conn.close();
  }
}

Deno.test({
  name: "fuzz: mutated HTTP requests never get a 500 from the MCP server",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const next = seededRandom(SEED + 3);
    const pick = <T>(xs: T[]) => xs[Math.floor(next() * xs.length)];
    await withHttp(async (http, token) => {
      const init = JSON.stringify(initialize("2025-11-25"));
      const hosts = [
        `127.0.0.1:${http.port}`,
        "[::1]evil.com",
        "[::1",
        "[::1]:99999999",
        "localhost:abc",
        "evil.com",
        "",
        " ",
        "127.0.0.1:" + "9".repeat(40),
        "[zz::1]",
        "%00",
        "localhost@evil.com",
      ];
      for (let i = 0; i < COUNT; i++) {
        const body = next() < 0.5 ? init : mutate(init, next);
        const headers = [
          `Host: ${pick(hosts)}`,
          next() < 0.8 ? `Authorization: Bearer ${next() < 0.8 ? token : mutate(token, next)}` : "",
          next() < 0.3 ? `Origin: ${pick(["http://evil.com", "null", "http://[::1", "x"])}` : "",
          `Content-Type: ${pick(["application/json", "text/plain", "application/json; x", ""])}`,
          `Accept: ${pick(["application/json, text/event-stream", "*/*", "text/html"])}`,
          next() < 0.2 ? `Mcp-Session-Id: ${mutate("abc", next)}` : "",
          `Content-Length: ${new TextEncoder().encode(body).length}`,
        ].filter((h) => h !== "" && !/[\r\n]/.test(h.slice(0, -1)));
        const method = pick(["POST", "POST", "GET", "DELETE", "PUT"]);
        const path = pick(["/mcp", "/mcp?x=1", "/", "/%2e%2e/mcp", "//mcp", "/mcp#x"]);
        const request = `${method} ${path} HTTP/1.1\r\n${headers.join("\r\n")}\r\n\r\n${body}`;
        const status = await rawStatus(http.port, request);
        assert.notEqual(status, 500, `seed ${SEED + 3}, #${i}: ${request.slice(0, 600)}`);
      }
      // The case the campaign found: a Host that is loopback followed by another name.
      const evil =
        `POST /mcp HTTP/1.1\r\nHost: [::1]evil.com\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${init.length}\r\n\r\n${init}`;
      const status = await rawStatus(http.port, evil);
      assert.ok(status === 400 || status === 403, `Host [::1]evil.com: ${status}`);
    });
  },
});

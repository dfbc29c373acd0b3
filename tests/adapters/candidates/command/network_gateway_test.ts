/**
 * `:network true` command candidates share the host's network, where every attempt's world
 * gateway listens on a host loopback port: two such attempts run side by side under
 * --parallel 2, and each reaches only its own gateway. The other's port answers nothing
 * without that attempt's secret (none, another, or its own), and the secrets are in nothing
 * the run stores.
 */
import assert from "node:assert/strict";
import { commandCandidate, detectBwrap } from "../../../../adapters/candidates/command/command.ts";
import { commandGateway } from "../../../../adapters/gateway/command_gateway.ts";
import { memoryHome } from "../../../../adapters/store/memory/home.ts";
import { planExperiment } from "../../../../core/bench/experiment.ts";
import { type BlobStore, getJson } from "../../../../core/ports/blob_store.ts";
import type { StateStore } from "../../../../core/ports/state_store.ts";
import { createCheckerPool } from "../../../../sandbox/checker_pool.ts";
import { wordBundle } from "../../../helpers/dataset_bundle.ts";
import { runInHome } from "../../../helpers/engine_run.ts";
import { planRecords } from "../../../helpers/plan_records.ts";

const env = (k: string) => Deno.env.get(k);
const hasBwrap = await detectBwrap(env);
const hasCurl = await new Deno.Command("curl", { args: ["--version"] }).output()
  .then((o) => o.success, () => false);

/**
 * Where the attempts meet (a server of the test on the host's loopback): each says its own
 * gateway URL (so the test knows the secrets), asks for another attempt's port until one has
 * said its own (so the two ran at the same time), reports what it reached, and waits until
 * both have reported (so neither gateway closes while the other attempt still probes it).
 */
function startBoard() {
  const secrets = new Map<string, string>(); // port → secret
  const results = new Map<string, string>(); // port → the probes' lines
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    const body = await req.text();
    if (url.pathname === "/hello") {
      const m = /^http:\/\/127\.0\.0\.1:(\d+)\/(.+)$/.exec(body);
      if (!m) return new Response(`not a gateway URL: ${body}`, { status: 400 });
      secrets.set(m[1], m[2]);
      return new Response("ok");
    }
    const me = url.searchParams.get("port") ?? "";
    if (url.pathname === "/peer") {
      const other = [...secrets.keys()].find((p) => p !== me);
      return other === undefined ? new Response("not yet", { status: 404 }) : new Response(other);
    }
    if (url.pathname === "/result") {
      results.set(me, body);
      return new Response("ok");
    }
    if (url.pathname === "/both") {
      return results.size >= 2 ? new Response("ok") : new Response("not yet", { status: 404 });
    }
    return new Response("no", { status: 404 });
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, secrets, results, server };
}

const INIT = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":' +
  '"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}';

/**
 * The candidate: says its URL, waits for the other attempt's port, probes its own gateway and
 * the other's, reports each probe as "name status bytes", waits for the other's report, then
 * answers the case.
 */
const PROBE = `
me="$DVERGR_MODEL_URL"
rest=\${me#http://127.0.0.1:}
port=\${rest%%/*}
secret=\${rest#*/}
curl -s -o /dev/null --data-binary "$me" "$BOARD/hello"
until peer=$(curl -sf "$BOARD/peer?port=$port"); do sleep 0.05; done
other="http://127.0.0.1:$peer"
wrong=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA
probe() {
  name=$1; shift
  code=$(curl -s -o /tmp/body -w '%{http_code}' "$@")
  echo "$name $code $(wc -c < /tmp/body)"
}
mcp() { probe "$1" -X POST -H 'content-type: application/json' \\
  -H 'accept: application/json, text/event-stream' --data-binary "$INIT" "$2"; }
{
  probe own "$me/"
  mcp own-mcp "$me/mcp"
  probe other "$other/"
  mcp other-mcp "$other/mcp"
  probe other-model -X POST -H 'content-type: application/json' \\
    --data-binary '{"model":"m","max_tokens":1,"messages":[]}' "$other/v1/messages"
  mcp other-wrong "$other/$wrong/mcp"
  mcp other-mine "$other/$secret/mcp"
} > /tmp/probes
curl -s -o /dev/null --data-binary @/tmp/probes "$BOARD/result?port=$port"
until curl -sf -o /dev/null "$BOARD/both"; do sleep 0.05; done
cat docs/q.txt > out/answer.txt
`;

/**
 * The home's state store and blob store, keeping the text of everything the run stores: the
 * records and small blobs it commits together (putAttempts), and the large blobs it puts.
 */
function recording(state: StateStore): { state: StateStore; blobs: BlobStore; texts: string[] } {
  const texts: string[] = [];
  const dec = new TextDecoder();
  const putAttempts: StateStore["putAttempts"] = (commits, owner) => {
    for (const c of commits) {
      texts.push(JSON.stringify(c.record));
      for (const bytes of c.blobs?.values() ?? []) texts.push(dec.decode(bytes));
    }
    return state.putAttempts(commits, owner);
  };
  const blobs: BlobStore = {
    put: (content) => {
      texts.push(typeof content === "string" ? content : dec.decode(content));
      return state.blobs.put(content);
    },
    get: (id) => state.blobs.get(id),
    has: (id) => state.blobs.has(id),
  };
  const seen = new Proxy(state, {
    get: (target, key) => {
      if (key === "putAttempts") return putAttempts;
      const v = Reflect.get(target, key);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { state: seen, blobs, texts };
}

Deno.test({
  name:
    "dvergr's engine at --parallel 2 [bwrap, :network true]: two attempts side by side, each reaching only its own gateway; no secret stored",
  ignore: !hasBwrap || !hasCurl,
  async fn() {
    const board = startBoard();
    const bundle = wordBundle(2);
    const candidate = commandCandidate(
      {
        name: "net",
        command: PROBE,
        env: { BOARD: board.url, INIT },
        network: true,
      },
      { isolation: "bwrap", env, gateway: commandGateway({ env }) },
    );
    const home = await memoryHome();
    const pool = createCheckerPool({ workers: 1 });
    const stored = recording(home.state);
    try {
      // One at a time, the first would wait for the second until its time limit: a failure.
      const plan = planExperiment(bundle, [candidate], { timeoutMs: 120_000 });
      const result = await runInHome(home, {
        bundle,
        plan,
        candidates: [candidate],
        runner: pool,
        parallel: 2,
        state: stored.state,
        blobs: stored.blobs,
      });
      const records = await planRecords(home.state, plan);
      const said = JSON.stringify(records.map((r) => [r.status, r.fault, r.failure]));
      assert.equal(result.faults, 0, said);
      assert.equal(records.length, 2);
      assert.deepEqual(records.map((r) => r.passed), [true, true], said);
      // Both met: two gateways, on two ports, behind two secrets.
      assert.equal(board.secrets.size, 2);
      const secrets = [...board.secrets.values()];
      assert.notEqual(secrets[0], secrets[1]);
      for (const s of secrets) assert.match(s, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(board.results.size, 2);
      for (const [port, lines] of board.results) {
        const got = Object.fromEntries(
          lines.trim().split("\n").map((l) => l.split(" ")).map(([n, c, b]) => [n, [c, b]]),
        );
        // Its own gateway answers…
        assert.equal(got.own[0], "200", `${port}: ${lines}`);
        assert.equal(got["own-mcp"][0], "200", `${port}: ${lines}`);
        // …the other's answers nothing at all: no secret, a wrong one, its own.
        for (const p of ["other", "other-mcp", "other-model", "other-wrong", "other-mine"]) {
          assert.deepEqual(got[p], ["404", "0"], `${port} ${p}: ${lines}`);
        }
      }
      // Each attempt's evidence holds its own requests only (the other's refused probes are
      // no part of it), at paths without a secret; nothing stored holds a secret.
      for (const r of records) {
        type Log = { modelLog: { method: string; path: string }[] };
        const ev = await getJson<{ candidate: { gateway: Log } }>(home.blobs, r.evidenceRef!);
        assert.deepEqual(ev!.candidate.gateway.modelLog.map((e) => `${e.method} ${e.path}`), [
          "GET /",
        ]);
      }
      // The records and evidence were seen on their way in (the probes' lines among them).
      const all = stored.texts.join("\n");
      assert.match(all, /"candidate":"net"/);
      assert.match(all, /"modelLog"/);
      for (const s of secrets) assert(!all.includes(s), "a secret is in what the run stored");
    } finally {
      pool.close();
      await home.close();
      await board.server.shutdown();
    }
  },
});

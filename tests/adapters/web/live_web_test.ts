import assert from "node:assert/strict";
import { liveGet } from "../../../adapters/web/live_get.ts";
import { braveConfigFrom, braveSearch } from "../../../adapters/web/brave.ts";
import { OPEN_POLICY, policyOf } from "../../../core/web/policy.ts";
import { startWebSite, TEST_CA_PATH } from "../../helpers/web_site.ts";

const local = { policy: policyOf({ allowedSources: ["127.0.0.1"] }), explicitHosts: ["127.0.0.1"] };

Deno.test("liveGet() fetches a page and follows a redirect, answering the final URL", async () => {
  const site = await startWebSite();
  try {
    const r = await liveGet(`${site.url}/moved#frag`, local);
    assert.equal(r.ok, true);
    if (!r.ok) return;
    assert.deepEqual([r.status, r.finalUrl, r.truncated], [200, `${site.url}/bolt`, false]);
    assert.match(r.body, /cordless drills/);
    const missing = await liveGet(`${site.url}/missing`, local);
    assert.equal(missing.ok && missing.status, 404);
    assert.deepEqual(site.requests, ["/moved", "/bolt", "/missing"]);
  } finally {
    await site.close();
  }
});

Deno.test("liveGet() refuses 127.0.0.1 unless :allowed-sources names it, at the first hop and at redirects", async () => {
  const site = await startWebSite();
  try {
    const open = await liveGet(`${site.url}/`, { policy: OPEN_POLICY, explicitHosts: [] });
    assert.equal(open.ok, false);
    assert.equal(!open.ok && open.denied, "private-address");
    assert.match(
      !open.ok ? open.message : "",
      /127\.0\.0\.1 resolves to 127\.0\.0\.1, a loopback, private or link-local address/,
    );
    // A name that resolves to a public address, then a redirect into the host's own network.
    const viaPublic: typeof fetch = (input, init) =>
      fetch(String(input).replace("public.example", "127.0.0.1"), init);
    const hop = await liveGet(`http://public.example:${site.port}/moved`, {
      policy: OPEN_POLICY,
      explicitHosts: [],
      fetchImpl: viaPublic,
      resolve: (h) => Promise.resolve(h === "public.example" ? ["203.0.113.7"] : []),
    });
    assert.equal(!hop.ok && hop.denied, "private-address");
    assert.equal(!hop.ok && hop.atUrl, `${site.url}/bolt`);
    assert.deepEqual(site.requests, ["/moved"]);
  } finally {
    await site.close();
  }
});

Deno.test("liveGet() re-checks the policy at a redirect into a blocked host", async () => {
  const site = await startWebSite();
  try {
    const policy = policyOf({
      allowedSources: ["127.0.0.1", "localhost"],
      blockedSources: ["localhost"],
    });
    const r = await liveGet(`${site.url}/to-localhost`, {
      policy,
      explicitHosts: ["127.0.0.1", "localhost"],
    });
    assert.deepEqual(r, {
      ok: false,
      denied: "blocked",
      message: "localhost is a blocked source for this task",
      atUrl: `http://localhost:${site.port}/secret`,
    });
    const notAllowed = await liveGet(`${site.url}/to-localhost`, local);
    assert.equal(!notAllowed.ok && notAllowed.denied, "not-allowed");
    assert.deepEqual(site.requests, ["/to-localhost", "/to-localhost"]);
    const scheme = await liveGet("file:///etc/passwd", local);
    assert.equal(!scheme.ok && scheme.denied, "scheme");
  } finally {
    await site.close();
  }
});

Deno.test("liveGet() bounds time, size and redirects", async () => {
  const site = await startWebSite({ hugeBytes: 3_000_000 });
  try {
    const slow = await liveGet(`${site.url}/slow`, { ...local, timeoutMs: 300 });
    assert.deepEqual(slow, {
      ok: false,
      message: "The page did not answer within 300 ms",
      atUrl: `${site.url}/slow`,
    });
    const huge = await liveGet(`${site.url}/huge`, { ...local, maxBytes: 100_000 });
    assert.equal(huge.ok && huge.truncated, true);
    assert.equal(huge.ok && huge.body.length, 100_000);
    const loop = await liveGet(`${site.url}/loop`, { ...local, maxRedirects: 3 });
    assert.deepEqual(loop, {
      ok: false,
      message: "Too many redirects (more than 3)",
      atUrl: `${site.url}/loop`,
    });
  } finally {
    await site.close();
  }
});

Deno.test("braveSearch() asks a Brave-compatible endpoint with the key and reads its hits as text", async () => {
  const site = await startWebSite({ braveKey: "k-123" });
  try {
    const cfg = braveConfigFrom(
      (k) => ({ BRAVE_API_KEY: "k-123", DVERGR_BRAVE_BASE_URL: site.url })[k],
      "b",
    );
    const r = await braveSearch(cfg, "cordless", 3);
    assert.deepEqual(r, {
      ok: true,
      hits: [{
        url: `${site.url}/bolt`,
        title: "Bolt Hardware",
        description: "A page about cordless",
      }],
    });
    assert.deepEqual(site.requests, ["/res/v1/web/search?q=cordless&count=3"]);
    const bad = await braveSearch({ ...cfg, apiKey: "wrong" }, "drills", 3);
    assert.equal(bad.ok, false);
    assert.match(!bad.ok ? bad.message : "", /Brave Search answered 401/);
  } finally {
    await site.close();
  }
});

Deno.test("braveConfigFrom() refuses a missing key with a clear error", () => {
  assert.throws(() => braveConfigFrom(() => undefined, "rivals"), {
    name: "DvergrError",
    message: 'Cannot benchmark "rivals": its tasks search the web and BRAVE_API_KEY is not set',
  });
  assert.equal(
    braveConfigFrom((k) => (k === "BRAVE_API_KEY" ? "x" : undefined), "b").baseUrl,
    "https://api.search.brave.com",
  );
});

Deno.test("liveGet() trusts a test CA given in DENO_CERT, and only then", async () => {
  const site = await startWebSite({ tls: true });
  const dir = await Deno.makeTempDir({ prefix: "dvergr-denocert-" });
  try {
    const script = `${dir}/get.ts`;
    const module = new URL("../../../adapters/web/live_get.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { liveGet } from ${JSON.stringify(module)};
const r = await liveGet(${
        JSON.stringify(`${site.url}/bolt`)
      }, { policy: { allow: ["127.0.0.1"], deny: [] }, explicitHosts: ["127.0.0.1"] });
console.log(JSON.stringify(r.ok ? { ok: true, status: r.status } : { ok: false, message: r.message }));`,
    );
    const run = async (env: Record<string, string>) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--no-config", "--allow-net", `--allow-read`, script],
        env,
        stdout: "piped",
        stderr: "piped",
      }).output();
      return JSON.parse(new TextDecoder().decode(out.stdout));
    };
    assert.deepEqual(await run({ DENO_CERT: TEST_CA_PATH }), { ok: true, status: 200 });
    const untrusted = await run({});
    assert.equal(untrusted.ok, false);
    assert.match(untrusted.message, /certificate|UnknownIssuer|invalid peer/i);
  } finally {
    await site.close();
    await Deno.remove(dir, { recursive: true });
  }
});

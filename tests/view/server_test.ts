import assert from "node:assert/strict";
import { openHome } from "../../adapters/store/kv/home.ts";
import { viewHandler } from "../../view/server.ts";
import { cellKey } from "../../core/bench/records.ts";
import { PAYLOAD, viewHome } from "./view_home.ts";

const TOKEN = "0123456789abcdef".repeat(4);

function escaped(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

Deno.test("the viewer's handler serves every page of a home, escaped, and only with its token", async () => {
  const f = await viewHome();
  const home = await openHome(f.home);
  try {
    const handle = viewHandler({ homes: [{ label: f.home, home }], token: TOKEN });
    const get = async (path: string, headers: Record<string, string> = {}, method = "GET") => {
      const res = await handle(
        new Request(`http://127.0.0.1:17890${path}`, {
          method,
          headers: { host: "127.0.0.1:17890", ...headers },
        }),
      );
      return { status: res.status, headers: res.headers, text: await res.text() };
    };
    const t = `token=${TOKEN}`;

    const list = await get(`/?${t}`);
    assert.equal(list.status, 200);
    assert.match(list.headers.get("content-security-policy")!, /script-src 'none'/);
    assert.match(list.text, /2 experiments in /);
    assert.match(list.text, /class="status complete">complete</);
    assert.match(list.text, /class="status stopped">stopped: 0 of 2 graded</);
    assert.ok(list.text.includes(`/experiment?id=${f.finished}&amp;${t}`));

    const finished = await get(`/experiment?id=${f.finished}&${t}`);
    assert.equal(finished.status, 200);
    for (const h of ["Frontier", "Paired comparison", "Where answers fail", "Per-case results"]) {
      assert.ok(finished.text.includes(`<h2>${h}</h2>`), h);
    }
    assert.match(finished.text, /<svg class="plot"/);
    assert.ok(!finished.text.includes("<script"), "a complete experiment's page has no script");
    assert.ok(finished.text.includes(`/attempt?id=${f.finished}&amp;candidate=bad&amp;case=c2`));
    assert.ok(finished.text.includes(`/compare?a=${f.failed}&amp;b=${f.finished}`));

    // The failed experiment is followed live: its page has the one script, allowed by nonce.
    const failed = await get(`/experiment?id=${f.failed}&${t}`);
    assert.equal(failed.status, 200);
    const nonce = /script-src 'nonce-([0-9a-f]+)'/.exec(
      failed.headers.get("content-security-policy")!,
    )![1];
    assert.equal(failed.text.match(/<script/g)!.length, 1);
    assert.ok(failed.text.includes(`<script nonce="${nonce}">`));
    assert.match(failed.text, /data-state="stopped:0"/);
    const live = await get(`/experiment/live?id=${f.failed}&${t}`);
    assert.equal(live.status, 200);
    assert.equal(live.headers.get("x-view-state"), "stopped:0");

    // A cell's lease held makes it running, as a benchmark's process would.
    const lease = await home.state.takeLease(
      f.failed,
      cellKey("good", "c1", 0),
      { pid: 1, host: "test", owner: "the-test" },
      60_000,
    );
    assert.equal(lease.ok, true);
    assert.match((await get(`/?${t}`)).text, /class="status running">running: 0 of 2 graded</);
    assert.equal(
      (await get(`/experiment/live?id=${f.failed}&${t}`)).headers.get("x-view-state"),
      "running:0",
    );

    // The attempt: its cause, checks, stderr and files, every candidate's text escaped.
    const bad = await get(`/attempt?id=${f.finished}&candidate=bad&case=c2&rep=0&${t}`);
    assert.equal(bad.status, 200);
    assert.match(bad.text, /exit status 3/);
    assert.match(bad.text, /<h3>stderr \(\d+ bytes; the tail\)<\/h3><pre>/);
    assert.ok(bad.text.includes(`<td>${escaped(":" + PAYLOAD)}</td>`), "the check, escaped");
    const good = await get(`/attempt?id=${f.finished}&candidate=good&case=c2&rep=0&${t}`);
    assert.equal(good.status, 200);
    assert.match(good.text, /<h3>\/out\/answer.txt<\/h3><p>Against the fixture:/);
    assert.ok(good.text.includes('<span class="del">- old line</span>'));
    assert.ok(good.text.includes('<span class="add">+ w2</span>'));
    assert.match(good.text, /<td class="pass">pass<\/td>/);

    const compare = await get(`/compare?a=${f.finished}&b=${f.failed}&${t}`);
    assert.equal(compare.status, 200);
    assert.match(compare.text, /<div class="side">/);

    for (const page of [list, finished, failed, live, bad, good, compare]) {
      assert.ok(!page.text.includes(PAYLOAD), "no candidate or bundle text unescaped");
      assert.ok(!/<img/i.test(page.text));
    }

    // Refusals: no token, another token, another site's page, another host name.
    assert.equal((await get("/")).status, 401);
    assert.equal((await get(`/experiment?id=${f.finished}&token=${"f".repeat(64)}`)).status, 401);
    assert.equal((await get(`/?${t}`, { origin: "http://evil.example" })).status, 403);
    assert.equal((await get(`/?${t}`, { host: "evil.example:17890" })).status, 403);
    assert.equal((await get(`/?${t}`, { origin: "http://127.0.0.1:17890" })).status, 200);
    assert.equal((await get(`/?${t}`, {}, "POST")).status, 405);
    // Bad addresses are pages that say so, not failures.
    assert.equal((await get(`/experiment?id=nope&${t}`)).status, 404);
    assert.equal((await get(`/nowhere?${t}`)).status, 404);
    const noCell = await get(`/attempt?id=${f.finished}&candidate=zzz&case=c1&${t}`);
    assert.equal(noCell.status, 400);
    assert.match(noCell.text, /has no candidate &quot;zzz&quot;/);
    assert.equal(
      (await get(`/attempt?id=${f.finished}&candidate=good&case=c1&rep=x&${t}`)).status,
      400,
    );
    const notRun = await get(`/attempt?id=${f.failed}&candidate=good&case=c1&rep=0&${t}`);
    assert.equal(notRun.status, 200, "a faulted cell has a record: its attempt is shown");
  } finally {
    await home.close();
  }
});

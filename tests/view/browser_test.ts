/**
 * The viewer in a real browser: Debian's Chromium (headless), driven by puppeteer-core over
 * the DevTools protocol (it downloads nothing: the system's browser is given). A home with
 * a finished, a failed and a running experiment (a benchmark in a child process whose
 * cells wait for a gate file); every page loads, every link on them leads to a page that
 * answers 200, candidate text never runs as script, the running experiment's page follows
 * it without a reload, and the token is required. Screenshots are kept in
 * $DVERGR_ARTIFACTS/view (else a temporary directory), printed.
 *
 * Without Chromium the test is skipped, unless DVERGR_REQUIRE_CHROMIUM=1 (.ci/run sets it).
 */
import assert from "node:assert/strict";
import { DVERGR_PERMISSIONS } from "../../core/permissions.ts";
import { join } from "node:path";
import { openHome } from "../../adapters/store/kv/home.ts";
import { serveView } from "../../view/server.ts";
import { newToken } from "../../mcp/token.ts";
import { PAYLOAD, viewHome } from "./view_home.ts";

const CHROMIUM = "/usr/bin/chromium";
const present = await Deno.stat(CHROMIUM).then(() => true, () => false);
const required = Deno.env.get("DVERGR_REQUIRE_CHROMIUM") === "1";
const MAIN = new URL("../../main.ts", import.meta.url).pathname;

/** Polls `f` every 200 ms until it is true, at most `ms` (then fails, naming `what`). */
async function until(what: string, ms: number, f: () => Promise<boolean>): Promise<void> {
  const end = performance.now() + ms;
  while (!(await f())) {
    if (performance.now() > end) throw new Error(`waited ${ms} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

Deno.test({
  name:
    "dvergr view in headless Chromium: pages load, links lead to 200, a running experiment updates, the token is required",
  ignore: !present && !required,
  // puppeteer's WebSocket to the browser is closed by browser.close(); its timers may not be.
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  assert.ok(
    present,
    `DVERGR_REQUIRE_CHROMIUM=1 but ${CHROMIUM} is missing (apt-get install chromium)`,
  );
  // Only a test's browser driver: pinned here, not in deno.json, so no module of the program
  // can import it.
  // deno-lint-ignore no-import-prefix
  const puppeteer = (await import("npm:puppeteer-core@25.16.0")).default;
  const f = await viewHome();
  const gate = await Deno.makeTempDir({ prefix: "dvergr-gate-" });
  // Readable to all: as root, the candidate runs as an unprivileged uid.
  await Deno.chmod(gate, 0o755);
  const shots = Deno.env.get("DVERGR_ARTIFACTS")
    ? join(Deno.env.get("DVERGR_ARTIFACTS")!, "view")
    : await Deno.makeTempDir({ prefix: "dvergr-view-shots-" });
  await Deno.mkdir(shots, { recursive: true });
  // deno-lint-ignore no-console -- where the screenshots are, as the test's artifacts
  console.log(`screenshots: ${shots}`);

  // The running experiment: each cell waits for the gate before it answers (at most 100 s,
  // within its 120 s time limit; the test opens the gate when it is done, whatever happened).
  const wait =
    `n=0; while [ ! -e ${gate}/open ] && [ $n -lt 1000 ]; do sleep 0.1; n=$((n+1)); done`;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...DVERGR_PERMISSIONS,
      MAIN,
      "benchmark",
      f.bundle,
      "--home",
      f.home,
      "--candidate",
      `gated=cmd:${wait}; cat docs/q.txt > out/answer.txt`,
      "--mount",
      gate,
      "--timeout-ms",
      "120000",
      "--parallel",
      "1",
      "--repetitions",
      "2",
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const home = await openHome(f.home);
  const token = newToken();
  const server = serveView({
    homes: [{ label: f.home, home }],
    token,
    port: 0,
    log: () => {},
  });
  const base = `http://127.0.0.1:${server.port}`;
  const userData = await Deno.makeTempDir({ prefix: "dvergr-chromium-" });
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    pipe: false,
    headless: true,
    userDataDir: userData,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1300, height: 900 });
    const dialogs: string[] = [];
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const outside: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(base) && !r.url().startsWith("data:")) outside.push(r.url());
    });

    // The running experiment is there once one of its cells holds a lease.
    let running = "";
    await until("the running experiment", 60_000, async () => {
      const res = await fetch(`${base}/?token=${token}`);
      const text = await res.text();
      const m =
        /href="\/experiment\?id=([0-9a-f-]+)&amp;token=[0-9a-f]+">[^<]*<\/a><\/td>(?:(?!<\/tr>).)*class="status running"/s
          .exec(text);
      running = m?.[1] ?? "";
      return running !== "";
    });

    const list = await page.goto(`${base}/?token=${token}`);
    assert.equal(list!.status(), 200);
    await page.screenshot({ path: join(shots, "experiments.png"), fullPage: true });
    const statuses = await page.$$eval("td.status", (tds) => tds.map((t) => t.className));
    assert.deepEqual(statuses.map((s) => s.split(" ")[1]).sort(), [
      "complete",
      "running",
      "stopped",
    ]);

    // Every link of every page leads to a page that answers 200.
    const seen = new Set<string>([`${base}/?token=${token}`]);
    const queue = [`${base}/?token=${token}`];
    const kinds = new Set<string>();
    while (queue.length > 0 && seen.size <= 150) {
      const url = queue.shift()!;
      const res = await page.goto(url);
      assert.equal(res!.status(), 200, url);
      assert.notEqual(await page.title(), "pwned", `a script ran on ${url}`);
      const route = new URL(url).pathname;
      if (!kinds.has(route)) {
        kinds.add(route);
        await page.screenshot({
          path: join(shots, `${route.slice(1).replaceAll("/", "-") || "index"}.png`),
          fullPage: true,
        });
      }
      const hrefs = await page.$$eval(
        "a[href]",
        (as) => as.map((a) => a.getAttribute("href") ?? ""),
      );
      for (const h of hrefs.map((h) => new URL(h, url).href)) {
        assert.ok(h.startsWith(base), `a link to another site: ${h}`);
        if (!seen.has(h)) {
          seen.add(h);
          queue.push(h);
        }
      }
    }
    assert.deepEqual([...kinds].sort(), ["/", "/attempt", "/compare", "/experiment"]);
    assert.ok(seen.size > 15, `crawled ${seen.size} pages`);

    // The hostile candidate's text is shown as text.
    await page.goto(
      `${base}/attempt?id=${f.finished}&candidate=bad&case=c2&rep=0&token=${token}`,
    );
    const stderr = await page.$$eval("pre", (ps) => ps.map((p) => p.textContent ?? ""));
    assert.ok(stderr.some((t) => t.includes(PAYLOAD)), "the payload is shown as text");
    assert.equal(await page.$$eval("img", (is) => is.length), 0);

    // The compare form opens two experiments side by side.
    await page.goto(`${base}/?token=${token}`);
    await Promise.all([page.waitForNavigation(), page.click("form button")]);
    assert.match(page.url(), /\/compare\?/);
    assert.equal(await page.$$eval(".side > section", (s) => s.length), 2);

    // The running experiment's page follows it: the gate opens, its cells are graded.
    await page.goto(`${base}/experiment?id=${running}&token=${token}`);
    await page.evaluate(() => ((globalThis as unknown as { marker: number }).marker = 1));
    const before = await page.$eval("#live", (e) => e.getAttribute("data-state"));
    assert.match(before ?? "", /^running:0$/);
    await page.screenshot({ path: join(shots, "running-before.png"), fullPage: true });
    await Deno.writeTextFile(join(gate, "open"), "");
    await page.waitForFunction(
      '(document.getElementById("live")?.dataset.state ?? "").startsWith("complete:")',
      { timeout: 60_000, polling: 200 },
    );
    assert.equal(
      await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker),
      1,
      "updated in place, not reloaded",
    );
    assert.match(await page.$eval("#live", (e) => e.textContent ?? ""), /Per-case results/);
    assert.equal(await page.$$eval(".cells td.o-passed", (t) => t.length), 4);
    await page.screenshot({ path: join(shots, "running-after.png"), fullPage: true });

    // Without the token, or with another, nothing is shown.
    assert.equal((await page.goto(`${base}/`))!.status(), 401);
    assert.equal((await page.goto(`${base}/?token=${"0".repeat(64)}`))!.status(), 401);
    assert.match(await page.content(), /the URL dvergr view printed/);

    assert.deepEqual(dialogs, []);
    assert.deepEqual(outside, [], "nothing was loaded from elsewhere");
    const status = await child.status;
    assert.ok(status.code === 0, new TextDecoder().decode((await child.output()).stderr));
  } finally {
    await browser.close();
    await Deno.writeTextFile(join(gate, "open"), "").catch(() => {});
    try {
      child.kill("SIGTERM");
    } catch {
      // It ended.
    }
    await child.status;
    await child.stderr.cancel().catch(() => {});
    await server.close();
    await home.close();
    await Deno.remove(userData, { recursive: true }).catch(() => {});
  }
});

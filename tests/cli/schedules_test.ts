/**
 * Schedules end to end: a weekly schedule driven with `dvergr tick --now` day by day across a
 * month starts one run a week; a daily one missed for a week runs once; two `dvergr tick`
 * processes and two `dvergr serve` processes on one home start each due run once; a
 * cancelled schedule starts nothing; schedules are read back by a new process (they survive
 * restarts). The runs are builtin:reference runs of the wiki-keeper bundle (memory worlds).
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { dvergrWithPath } from "../helpers/cli.ts";
import { wikiHome } from "../helpers/wiki_room.ts";
import { DVERGR_RUN_FLAGS } from "../../core/permissions.ts";

const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));
const DAY = 86_400_000;

async function deploy(home: string, ...args: string[]) {
  const r = await dvergrWithPath([
    "deploy",
    "wiki/wiki-keeper",
    "--candidate",
    "builtin:reference",
    "--home",
    home,
    "--json",
    ...args,
  ]);
  assert.equal(r.code, 0, r.out + r.err);
  return JSON.parse(r.out) as { id: string; nextRun: string };
}

async function runs(home: string) {
  const r = await dvergrWithPath(["runs", "--home", home, "--json"]);
  assert.equal(r.code, 0, r.err);
  return JSON.parse(r.out).runs as { id: string; schedule?: string; status: string }[];
}

/** `dvergr ARGS` as a child process of its own (a real second process on the home). */
function child(args: string[]) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...DVERGR_RUN_FLAGS, "--unstable-kv", MAIN, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  });
}

Deno.test("a weekly schedule ticked every day for a month runs once a week", async () => {
  const home = await wikiHome();
  const s = await deploy(home, "--every", "7d", "--at", "06:30");
  const first = Date.parse(s.nextRun);
  assert.match(s.nextRun, /T06:30:00\.000Z$/);
  const started: string[] = [];
  for (let day = -1; day < 30; day++) {
    const now = new Date(first + day * DAY + 3_600_000).toISOString();
    const r = await dvergrWithPath(["tick", "--now", now, "--home", home, "--json"]);
    assert.equal(r.code, 0, r.out + r.err);
    for (const t of JSON.parse(r.out).ticks) {
      assert.equal(t.started, true);
      started.push(t.slot);
    }
  }
  assert.deepEqual(started, [0, 7, 14, 21, 28].map((d) => new Date(first + d * DAY).toISOString()));
  assert.equal((await runs(home)).filter((r) => r.schedule === s.id).length, 5);
  const listed = await dvergrWithPath(["schedules", "--home", home]);
  assert.match(
    listed.out,
    new RegExp(`^${s.id}  wiki/wiki-keeper  builtin:reference  every 7d at 06:30  next `, "m"),
  );
  await Deno.remove(home, { recursive: true });
});

Deno.test("a daily schedule missed for a week runs once; a cancelled one starts nothing", async () => {
  const home = await wikiHome();
  const s = await deploy(home, "--every", "1d");
  const late = new Date(Date.parse(s.nextRun) + 7.5 * DAY).toISOString();
  const a = await dvergrWithPath(["tick", "--now", late, "--home", home, "--json"]);
  assert.equal(JSON.parse(a.out).ticks.length, 1, a.out);
  const b = await dvergrWithPath(["tick", "--now", late, "--home", home]);
  assert.equal(b.out, "Nothing due\n");
  const c = await dvergrWithPath(["schedules", "cancel", s.id, "--home", home]);
  assert.equal(c.code, 0, c.err);
  assert.match(c.out, /cancelled/);
  const d = await dvergrWithPath([
    "tick",
    "--now",
    new Date(Date.parse(late) + 3 * DAY).toISOString(),
    "--home",
    home,
  ]);
  assert.equal(d.out, "Nothing due\n");
  const e = await dvergrWithPath(["schedules", "cancel", "s-nothere", "--home", home]);
  assert.equal(e.code, 2);
  const bad = await dvergrWithPath([
    "deploy",
    "wiki/wiki-keeper",
    "--candidate",
    "builtin:reference",
    "--every",
    "30s",
    "--home",
    home,
  ]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /Cannot schedule every "30s"/);
  await Deno.remove(home, { recursive: true });
});

Deno.test("two dvergr tick processes on one home start each due run once", async () => {
  const home = await wikiHome();
  const s = await deploy(home, "--every", "1d");
  const now = new Date(Date.parse(s.nextRun) + 60_000).toISOString();
  const outs = await Promise.all(
    [0, 1].map(() => child(["tick", "--now", now, "--home", home, "--json"]).output()),
  );
  const ticks = outs.map((o) => {
    assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
    return JSON.parse(new TextDecoder().decode(o.stdout)).ticks as { started: boolean }[];
  }).flat();
  assert.equal(ticks.filter((t) => t.started).length, 1, JSON.stringify(ticks));
  assert.equal((await runs(home)).length, 1);
  await Deno.remove(home, { recursive: true });
});

Deno.test("two dvergr serve processes on one home start a due run once", async () => {
  const home = await wikiHome();
  await deploy(home, "--every", "1h");
  const serves = [0, 1].map(() => child(["serve", "--home", home]).spawn());
  try {
    // Bounded: the run takes well under a second; a loaded machine gets two minutes.
    for (
      let i = 0;
      i < 600 && (await runs(home)).filter((r) => r.status !== "running").length < 1;
      i++
    ) {
      await new Promise((r) => setTimeout(r, 200));
    }
    // Both processes have looked at the schedule by now (each ticks at start).
    await new Promise((r) => setTimeout(r, 1000));
  } finally {
    for (const p of serves) p.kill("SIGTERM");
  }
  const ended = await Promise.all(serves.map((p) => p.output()));
  for (const o of ended) assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
  const logs = ended.map((o) => new TextDecoder().decode(o.stderr)).join("");
  assert.equal((await runs(home)).length, 1, logs);
  assert.equal((logs.match(/: run \S+ /g) ?? []).length, 1, logs);
  await Deno.remove(home, { recursive: true });
});

Deno.test("dvergr serve --mcp starts due runs beside the MCP server", async () => {
  const home = await wikiHome();
  await deploy(home, "--every", "1h");
  const p = new Deno.Command(Deno.execPath(), {
    args: ["run", ...DVERGR_RUN_FLAGS, "--unstable-kv", MAIN, "serve", "--mcp", "--home", home],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  try {
    // Bounded: the run takes well under a second; a loaded machine gets two minutes.
    for (
      let i = 0;
      i < 600 && (await runs(home)).filter((r) => r.status === "ended").length < 1;
      i++
    ) {
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await p.stdin.close();
  }
  const o = await p.output();
  const log = new TextDecoder().decode(o.stderr);
  assert.equal(o.code, 0, log);
  assert.equal((await runs(home)).length, 1, log);
  assert.match(log, /dvergr-mcp: schedule s-\S+ slot \S+: run \S+ /);
  await Deno.remove(home, { recursive: true });
});

/**
 * A file system that cannot take the home's writes during a benchmark — full (a small tmpfs)
 * or a file over RLIMIT_FSIZE — ends the run with exit 2 and code IO, naming the file and
 * saying what the system said, never with a stack trace; the rerun, with room again, keeps
 * the cells committed before and runs the rest. A sandbox's pack of its world that finds no
 * room on the host is the same stop, never the candidate's failure kept from the run.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { DVERGR_RUN_FLAGS } from "../../core/permissions.ts";
import { detectBwrap } from "../../adapters/candidates/command/command.ts";
import { wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";
import { openKvStateStore } from "../../adapters/store/kv/state_store.ts";
import { dirBlobStore } from "../../adapters/store/kv/blob_store.ts";

const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));
const INVOICES = fileURLToPath(new URL("../../examples/workflows/invoice-fields", import.meta.url));

/** 5 cases × 2 candidates × 40 repetitions: far more records than the space given holds. */
function benchmarkArgs(home: string): string[] {
  return [
    "benchmark",
    INVOICES,
    "--candidate",
    "builtin:reference",
    "--candidate",
    "builtin:noop",
    "--repetitions",
    "40",
    "--home",
    home,
  ];
}
const CELLS = 400;

interface Ran {
  code: number;
  out: string;
  err: string;
}

async function run(cmd: string, args: string[]): Promise<Ran> {
  const out = await new Deno.Command(cmd, { args, stdin: "null" }).output();
  const text = new TextDecoder();
  return { code: out.code, out: text.decode(out.stdout), err: text.decode(out.stderr) };
}

function assertIoStop(r: Ran, file: RegExp, words: RegExp): void {
  assert.equal(r.code, 2, r.err);
  assert.doesNotMatch(r.err, /internal error|\n\s+at /);
  const line = r.err.split("\n").find((l) => l.startsWith("error[IO]: ")) ?? "";
  assert.match(line, file, r.err);
  assert.match(line, words, r.err);
  assert.match(r.err, /\nhint: ./);
}

/**
 * The rerun finished every cell, keeping the `committed` cells of the first run (its home's
 * records, read after it): how many landed before the limit depends on how its records were
 * grouped into commits (those graded while the room was installed go together), which
 * timing decides, so the test counts them rather than expecting some.
 */
function assertResumed(r: Ran, committed: number): void {
  assert.equal(r.code, 0, r.err);
  const kept = /Experiment [0-9a-f-]+: 400 cells(?:, (\d+) kept from earlier runs)?\n/.exec(r.err);
  assert.ok(kept, r.err);
  const n = Number(kept[1] ?? 0);
  assert.equal(n, committed, r.err);
  assert.match(r.out, /builtin:reference +reward 1\.000 +passed 200\/200/);
  assert.match(r.out, /builtin:noop +reward 0\.000 +passed 0\/200/);
}

/** The cells the home at `home` holds a record of (its one experiment's). */
async function committedCells(home: string): Promise<number> {
  const state = await openKvStateStore(join(home, "state.kv"), dirBlobStore(join(home, "blobs")));
  try {
    const experiments = await state.listExperiments();
    assert.ok(experiments.length <= 1);
    return experiments.length === 0 ? 0 : (await state.cellRecords(experiments[0].id)).length;
  } finally {
    state.close();
  }
}

const isRoot = Deno.uid() === 0;
/** How this test gets a mount namespace of its own: root needs no user namespace. */
const UNSHARE = isRoot ? ["-m"] : ["-Urm"];
const canMount = (await run("unshare", [...UNSHARE, "true"]).catch(() => null))?.code === 0;

/**
 * Inside a mount namespace of its own (gone with its last process, so nothing stays mounted
 * whatever happens): a 1 MiB tmpfs at $1, the benchmark, a copy of its home (its records, to
 * count), the tmpfs grown, the benchmark again.
 */
const TMPFS_SCRIPT = `set -u
dir=$1; out=$2; shift 2
mount -t tmpfs -o size=1m dvergr-full "$dir" || exit 90
"$@" >"$out/out1" 2>"$out/err1"; echo $? >"$out/rc1"
cp -r "$dir/h" "$out/h1" || exit 92
mount -o remount,size=64m "$dir" || exit 91
"$@" >"$out/out2" 2>"$out/err2"; echo $? >"$out/rc2"`;

Deno.test({
  name: "benchmark on a full file system exits 2 with IO naming the file, and the rerun resumes" +
    (canMount ? "" : " (skipped: not root, and no user namespace to mount a tmpfs in)"),
  ignore: !canMount,
  async fn() {
    const root = await Deno.makeTempDir();
    try {
      const dir = join(root, "fs");
      await Deno.mkdir(dir);
      const home = join(dir, "h");
      const shell = await run("unshare", [
        ...UNSHARE,
        "sh",
        "-c",
        TMPFS_SCRIPT,
        "sh",
        dir,
        root,
        Deno.execPath(),
        "run",
        ...DVERGR_RUN_FLAGS,
        MAIN,
        ...benchmarkArgs(home),
      ]);
      assert.equal(shell.code, 0, shell.err);
      const ran = async (n: number): Promise<Ran> => ({
        code: Number((await Deno.readTextFile(join(root, `rc${n}`))).trim()),
        out: await Deno.readTextFile(join(root, `out${n}`)),
        err: await Deno.readTextFile(join(root, `err${n}`)),
      });
      const first = await ran(1);
      assertIoStop(first, new RegExp(`"${home}/`), /database or disk is full|No space left/);
      const committed = await committedCells(join(root, "h1"));
      assert.ok(committed < CELLS);
      assertResumed(await ran(2), committed);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test("benchmark with a file over RLIMIT_FSIZE exits 2 with IO naming the file, and the rerun resumes", async () => {
  const home = await Deno.makeTempDir();
  try {
    // SIGXFSZ ignored, as a shell's `ulimit -f` user may have it: Deno's own caches are larger
    // than the limit, and the default action would kill it before it starts.
    const limited = await run("sh", [
      "-c",
      'trap "" XFSZ; exec prlimit --fsize=400000 -- "$@"',
      "sh",
      Deno.execPath(),
      "run",
      ...DVERGR_RUN_FLAGS,
      MAIN,
      ...benchmarkArgs(home),
    ]);
    // SQLite reports a write over the limit (EFBIG) as an I/O error; a file Deno writes says so.
    assertIoStop(limited, new RegExp(`"${home}/`), /disk I\/O error|File too large/);
    const committed = await committedCells(home);
    assert.ok(committed < CELLS);
    assertResumed(
      await run(Deno.execPath(), ["run", ...DVERGR_RUN_FLAGS, MAIN, ...benchmarkArgs(home)]),
      committed,
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test({
  name: "benchmark whose worlds cannot be made (a read-only file system) exits 2 with IO, " +
    "not a fault in every cell" +
    (canMount ? "" : " (skipped: not root, and no user namespace to mount a tmpfs in)"),
  ignore: !canMount,
  async fn() {
    const home = await Deno.makeTempDir();
    try {
      const r = await run("unshare", [
        ...UNSHARE,
        "sh",
        "-c",
        'mkdir -p "$1/worlds" && mount -t tmpfs -o ro dvergr-ro "$1/worlds" || exit 90\n' +
        'shift; exec "$@"',
        "sh",
        home,
        "env",
        "DVERGR_ISOLATION=none",
        Deno.execPath(),
        "run",
        ...DVERGR_RUN_FLAGS,
        MAIN,
        "benchmark",
        INVOICES,
        "--candidate",
        "quiet=cmd:true",
        "--home",
        home,
      ]);
      assertIoStop(r, new RegExp(`'${home}/worlds/`), /Read-only file system/);
      assert.doesNotMatch(r.err, /fault/);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});

const hasBwrap = await detectBwrap((k) => Deno.env.get(k));

/**
 * Inside a mount namespace of its own: an 8 MiB tmpfs at the home's worlds ($1), the
 * benchmark, the tmpfs grown, the benchmark again.
 */
const WORLDS_SCRIPT = `set -u
worlds=$1; out=$2; shift 2
mkdir -p "$worlds" && mount -t tmpfs -o size=8m dvergr-worlds "$worlds" || exit 90
"$@" >"$out/out1" 2>"$out/err1"; echo $? >"$out/rc1"
mount -o remount,size=128m "$worlds" || exit 91
"$@" >"$out/out2" 2>"$out/err2"; echo $? >"$out/rc2"`;

/** Each writes 12 MB beside its answer: more than the worlds' file system holds for its pack. */
const BULKY = (name: string, answer: string) =>
  `${name}=cmd:head -c 12000000 /dev/zero > out/bulk; ${answer} > out/answer.txt`;

Deno.test({
  name: "benchmark whose worlds' file system cannot hold a sandbox's pack exits 2 with IO, " +
    "keeps no attempt as a failure, and the rerun grades both candidates" +
    (canMount && hasBwrap ? "" : " (skipped: no mount namespace or no bubblewrap)"),
  ignore: !canMount || !hasBwrap,
  async fn() {
    const bundle = await writeBundleTo(wordDataset(1));
    const root = await Deno.makeTempDir();
    try {
      const home = join(root, "h");
      const shell = await run("unshare", [
        ...UNSHARE,
        "sh",
        "-c",
        WORLDS_SCRIPT,
        "sh",
        join(home, "worlds"),
        root,
        "env",
        `PATH=${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
        Deno.execPath(),
        "run",
        ...DVERGR_RUN_FLAGS,
        MAIN,
        "benchmark",
        bundle,
        "--candidate",
        BULKY("right", "cat docs/q.txt"),
        "--candidate",
        BULKY("wrong", "echo wrong"),
        "--home",
        home,
      ]);
      assert.equal(shell.code, 0, shell.err);
      const ran = async (n: number): Promise<Ran> => ({
        code: Number((await Deno.readTextFile(join(root, `rc${n}`))).trim()),
        out: await Deno.readTextFile(join(root, `out${n}`)),
        err: await Deno.readTextFile(join(root, `err${n}`)),
      });
      const first = await ran(1);
      assertIoStop(first, new RegExp(`"${home}/worlds/`), /No space left/);
      // Neither attempt is the candidate's failure: the rerun keeps none and runs both cells.
      const second = await ran(2);
      assert.equal(second.code, 0, second.err);
      assert.match(second.err, /Experiment [0-9a-f-]+: 2 cells/);
      assert.doesNotMatch(second.err, /kept from earlier runs/);
      assert.match(second.out, /right +reward 1\.000 +passed 1\/1/);
      assert.match(second.out, /wrong +reward 0\.000 +passed 0\/1/);
    } finally {
      await Deno.remove(root, { recursive: true });
      await Deno.remove(bundle, { recursive: true });
    }
  },
});

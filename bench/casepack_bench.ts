// A bench script: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * Case packs at scale: a 100,000-row bookings table (DATEV/Excel CSV) to a bundle
 * directory, through the same path as `dvergr cases`. Prints the time of each phase,
 * the whole run and the peak resident memory.
 *
 * With --replace, writes the bundle a second time over the first (`dvergr cases --force`).
 * Then copies the written tree with `cp -r` on the same disk (the file system's floor for
 * writing that tree) and prints the ratio, and writes the same bundle into a room as one
 * commit (`dvergr cases --room`), which writes no directory tree at all.
 *
 * Run (or `deno task bench`): deno run <dvergr permissions, see deno.json> bench/casepack_bench.ts [--rows 100000] [--replace] [--keep]
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { readAttachmentFiles, readTableFile } from "../adapters/files/table_file.ts";
import { attachmentRefs } from "../core/casepack/certify.ts";
import { buildCasePack } from "../core/casepack/generate.ts";
import { checkSpecColumns, completeSpec, parseOutcome } from "../core/casepack/spec.ts";
import { writeBundleDir } from "../adapters/files/bundle_dir.ts";
import { openHome } from "../adapters/store/kv/home.ts";
import { bookingsCsv, makeBookings } from "../examples/tables/make_bookings.ts";
import { countsLine } from "../cli/cases.ts";
import { DVERGR_PERMISSIONS } from "../core/permissions.ts";

/** Peak resident set size of this process in bytes (Linux VmHWM), else the current RSS. */
function peakRss(): number {
  try {
    const status = Deno.readTextFileSync("/proc/self/status");
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(status);
    if (m) return Number(m[1]) * 1024;
  } catch {
    // not Linux: fall back to the current figure
  }
  return Deno.memoryUsage().rss;
}

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MiB`;

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rows: { type: "string", default: "100000" },
    keep: { type: "boolean" },
    replace: { type: "boolean" },
    table: { type: "string" },
  },
});

if (values.table !== undefined) {
  // The measured run, in a process of its own so that generating the table does not
  // count toward its memory.
  const table = values.table;
  const t0 = performance.now();
  const spec = completeSpec({
    name: "bookings",
    id: "Beleg",
    inputs: ["Datum", "Betrag", "Buchungstext"],
    expected: ["Gegenkonto:exact", "BU:exact", "Netto:number:0.01"].map((o) => parseOutcome(o)),
    shared: new Map([["/docs/kontenrahmen.txt", "…"]]),
  });
  const parsed = await readTableFile(table);
  checkSpecColumns(spec, parsed);
  const attachments = await readAttachmentFiles(table, attachmentRefs(parsed, spec));
  const t1 = performance.now();
  const build = buildCasePack(parsed, spec, attachments);
  const t2 = performance.now();
  await writeBundleDir(join(table, "..", "bookings"), build.files!);
  const t3 = performance.now();
  if (values.replace) {
    await writeBundleDir(join(table, "..", "bookings"), build.files!, { force: true });
  }
  const t4 = performance.now();
  const s = (a: number, b: number) => `${((b - a) / 1000).toFixed(2)} s`;
  // The floor: the same tree copied by cp on the same disk, after a sync so that neither
  // pays for the other's writeback.
  const written = join(table, "..", "bookings");
  const copy = join(table, "..", "bookings-cp");
  await new Deno.Command("sync").output();
  const c0 = performance.now();
  const cp = await new Deno.Command("cp", { args: ["-r", written, copy] }).output();
  const c1 = performance.now();
  // Into a room: one commit, one packfile, no tree.
  const homeDir = join(table, "..", "home");
  const home = await openHome(homeDir);
  await home.rooms.createRoom("bench");
  const r0 = performance.now();
  await home.rooms.replaceDir("bench", "workflows/bookings", build.files!, "bench");
  const r1 = performance.now();
  await home.close();
  console.log(countsLine(build.certification));
  console.log(`read + parse     ${s(t0, t1)}`);
  console.log(`certify + build  ${s(t1, t2)}  (${build.files!.size} files)`);
  console.log(`write directory  ${s(t2, t3)}`);
  if (values.replace) console.log(`replace (--force) ${s(t3, t4)}`);
  console.log(`total            ${s(t0, t3)}`);
  if (cp.success) {
    console.log(
      `cp -r of the tree ${s(c0, c1)}  (write directory / cp -r = ${
        ((t3 - t2) / (c1 - c0)).toFixed(2)
      })`,
    );
  }
  console.log(
    `into a room (one packfile) ${s(r0, r1)}; total with --room ${s(t0, t2 + (r1 - r0))}`,
  );
  console.log(`peak RSS         ${mib(peakRss())}`);
  Deno.exit(0);
}

const target = Number(values.rows);
// The table: company-years of the example generator, one voucher prefix each, until
// the target is reached (each brings the example's noise, so every reason occurs).
const rows = [];
for (let c = 1; rows.length < target; c++) {
  const year = makeBookings({ seed: 20261001 + c, prefix: `M${String(c).padStart(3, "0")}-B` });
  rows.push(...year.slice(0, target - rows.length));
}
const dir = await Deno.makeTempDir({ prefix: "dvergr-casepack-bench-" });
const table = join(dir, "bookings.csv");
await Deno.writeTextFile(table, bookingsCsv(rows));
const size = (await Deno.stat(table)).size;
console.log(`table: ${rows.length} rows, ${mib(size)} (${table})`);
const child = await new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    ...DVERGR_PERMISSIONS,
    new URL(import.meta.url).pathname,
    "--table",
    table,
    ...(values.replace ? ["--replace"] : []),
  ],
  stdout: "inherit",
  stderr: "inherit",
}).output();
if (values.keep) console.log(`kept ${join(dir, "bookings")}`);
else {
  // rm is much faster than a recursive Deno.remove on 100,000 directories.
  const rm = await new Deno.Command("rm", { args: ["-rf", dir] }).output().catch(() => null);
  if (!rm?.success) await Deno.remove(dir, { recursive: true });
}
if (!child.success) throw new Error("the measured run failed");

/**
 * Catalog ops over room bundles: list them with their trust tier and content id, export
 * one (format dvergr-workflow/1), import an export into a room (verified, one commit), and
 * promote one (calibrated now, recorded in the home's KV outside every room).
 *
 * The same functions serve the CLI (`dvergr list|export|import|promote`), which also
 * exports and imports bundle directories.
 */
import { z } from "zod";
import { DvergrError } from "../errors.ts";
import { defineOp, type Op, type OpContext } from "./op.ts";
import type { FileBundle, FileMap } from "../bundle/file_map.ts";
import { contentId } from "../bundle/content_id.ts";
import { parseBundle } from "../bundle/parse.ts";
import { readEdn } from "../edn/read.ts";
import { isEdnMap, mapGet } from "../edn/values.ts";
import {
  type CalibrationSummary,
  checkExportable,
  exportBundle,
  exportProblems,
  hasOnlyClojureChecker,
  manifestJson,
} from "../bundle/export.ts";
import { verifyExport } from "../bundle/verify_export.ts";
import { calibrate, type CalibrationResult } from "../calibrate/calibrate.ts";
import type { TrustTier } from "../bench/records.ts";
import type { Promotion } from "../ports/state_store.ts";
import { trustOf } from "../ports/state_store.ts";
import { bundleDir, fileInTheWay, readRoomBundle, readRoomBundles } from "./room_bundles.ts";
import type { BundleDirs } from "../ports/bundle_dirs.ts";
import { VERSION } from "../version.ts";
import { defineFormat, fields, typed } from "../json_format.ts";
import { calibrationShape, calibrationSummaryShape } from "./formats.ts";
import type { CheckerRunner } from "../checker.ts";

const room = z.string().describe("Room slug, e.g. `books`");
const name = z.string().describe("Bundle name: the directory workflows/<name>/ of the room");

/** One bundle of a room as catalog_list shows it. */
export interface BundleEntry {
  bundle: string;
  /** Content id (docs/compatibility.md §3). */
  bundleId: string;
  /** Trust tier of its checker on this host: `room` when its id is promoted, else `ad-hoc`. */
  tier: TrustTier;
  title: string | null;
  /** Number of shape problems (0: well formed). */
  problems: number;
  /** Its checker is checker.clj (the earlier system's Clojure checker; no checker.js). */
  clojureChecker: boolean;
  /** Where and when this content was promoted on this host, if it was. */
  promotion: PromotionView | null;
}

/** A promotion as the JSON formats carry it: the bundle's name is `bundle`. */
export interface PromotionView {
  room: string;
  bundle: string;
  at: string;
}

function promotionView(p: Promotion): PromotionView {
  return { room: p.room, bundle: p.name, at: p.at };
}

function titleOf(files: FileMap): string | null {
  const text = files.get("workflow.edn");
  if (text === undefined) return null;
  try {
    const wf = readEdn(text, { file: "workflow.edn" });
    const title = isEdnMap(wf) ? mapGet(wf, "title") : undefined;
    return typeof title === "string" ? title : null;
  } catch {
    return null;
  }
}

/** What catalog_list says about one bundle (its tier from the home's promotions). */
export async function describeBundle(ctx: OpContext, fb: FileBundle): Promise<BundleEntry> {
  const id = contentId(fb.files);
  const clojure = hasOnlyClojureChecker(fb.files);
  const problems = exportProblems(fb.files);
  const promotion = await ctx.home.state.promotion(id);
  return {
    bundle: fb.name,
    bundleId: id,
    tier: promotion ? "room" : "ad-hoc",
    title: titleOf(fb.files),
    problems: problems.length,
    clojureChecker: clojure,
    promotion: promotion ? promotionView(promotion) : null,
  };
}

/**
 * Calibrates a bundle now (checker.js, or checker.clj in the Clojure sandbox); a
 * malformed bundle is a BUNDLE_INVALID error.
 */
export async function calibrateFiles(
  fb: FileBundle,
  runner: CheckerRunner,
): Promise<CalibrationResult> {
  return await calibrate(parseBundle(fb), runner);
}

/** An export and what it says. */
export interface ExportOutcome {
  bundle: string;
  bundleId: string;
  title: string | null;
  /** The calibration run for the export (recorded in its manifest). */
  calibration: CalibrationSummary;
  clojureChecker: boolean;
  /** The export: EDN text in format dvergr-workflow/1. */
  export: string;
}

/**
 * Exports a bundle (from a room or a directory): checks it can travel, calibrates it now
 * and writes the EDN export with that calibration in its manifest.
 */
export async function exportFiles(
  ctx: Pick<OpContext, "runner" | "clock">,
  fb: FileBundle,
): Promise<ExportOutcome> {
  checkExportable(fb);
  const result = await calibrateFiles(fb, ctx.runner);
  const calibration = { ok: result.ok, problems: result.problems };
  return {
    bundle: fb.name,
    bundleId: contentId(fb.files),
    title: titleOf(fb.files),
    calibration,
    clojureChecker: hasOnlyClojureChecker(fb.files),
    export: exportBundle(fb, calibration, { version: VERSION, now: ctx.clock() }),
  };
}

/** What an import did. */
export interface ImportOutcome {
  bundle: string;
  bundleId: string;
  /** The room imported into, or null for a directory. */
  room: string | null;
  /** The directory written, or null for a room. */
  dir: string | null;
  /** The commit that installed it; null when nothing changed (or for a directory). */
  commit: string | null;
  /** The target already held exactly this bundle: nothing was written. */
  unchanged: boolean;
  /** The target held other files, replaced because of `force`. */
  replaced: boolean;
  files: number;
  /**
   * Trust tier here: `room` only when this content is promoted on this host; null for a
   * directory written without a home to ask.
   */
  tier: TrustTier | null;
  clojureChecker: boolean;
  /** Notes for the user. */
  notes: string[];
  manifest: Record<string, unknown>;
}

function sameFiles(a: FileMap, b: FileMap): boolean {
  return a.size === b.size && [...a].every(([p, t]) => b.get(p) === t);
}

function notesFor(clojure: boolean): string[] {
  return clojure
    ? [
      "its checker is checker.clj (the earlier system's Clojure checker): it runs in the Clojure sandbox",
    ]
    : [];
}

/**
 * Verifies an export and installs it as `workflows/<as or name>/` of an existing room, in
 * exactly one commit. A target holding other files is refused (TARGET_EXISTS) unless
 * `force`, which makes it hold exactly the export's files; a target holding exactly this
 * bundle is left as it is (no commit). Nothing is written when verification fails.
 */
export async function importIntoRoom(
  ctx: OpContext,
  req: { room: string; text: string; file: string; as?: string; force?: boolean },
): Promise<ImportOutcome> {
  const v = verifyExport(req.text, { file: req.file, as: req.as });
  const rooms = ctx.home.rooms;
  if (!(await rooms.hasRoom(req.room))) {
    throw new DvergrError(
      "NOT_FOUND",
      `Cannot import into room "${req.room}": no such room in this home`,
      {
        hint:
          `Create it first (room_create, or \`dvergr room create ${req.room}\`), or check the home`,
        details: { room: req.room },
      },
    );
  }
  // What is there is read, then replaced: imports into one room take turns, or two at once
  // would both find the target empty and the second would silently replace the first.
  return await inTurn(`${ctx.home.dir}\0${req.room}`, async () => {
    const dir = bundleDir(v.name);
    const current = new Map(
      [...await rooms.readFiles(req.room, dir)].map(([p, t]) => [p.slice(dir.length + 1), t]),
    );
    // A file where the bundle's directory goes would be replaced by it just as silently.
    const blocker = await fileInTheWay(rooms, req.room, dir);
    const unchanged = blocker === null && sameFiles(current, v.files);
    const replaced = !unchanged && (current.size > 0 || blocker !== null);
    if (replaced && !req.force) {
      const hint =
        `Import it under another name (--as NAME, the \`as\` parameter), or replace what is there with --force (force: true); history keeps the old files`;
      if (blocker !== null) {
        throw new DvergrError(
          "TARGET_EXISTS",
          `Cannot import "${v.name}" into room ${req.room}: ${blocker} is a file, where the bundle's directory ${dir}/ would go`,
          { hint, details: { room: req.room, name: v.name, file: blocker, bundle: v.id } },
        );
      }
      throw new DvergrError(
        "TARGET_EXISTS",
        `Cannot import "${v.name}" into room ${req.room}: ${dir}/ already holds other files (content id ${
          contentId(current)
        }), and importing over them would make a different bundle`,
        {
          hint,
          details: { room: req.room, name: v.name, existing: contentId(current), bundle: v.id },
        },
      );
    }
    const commit = unchanged ? null : await rooms.replaceDir(
      req.room,
      dir,
      v.files,
      `Import ${v.name} (${v.id})${replaced ? ", replacing what was there" : ""}`,
      { removeFilesInTheWay: req.force === true },
    );
    return {
      bundle: v.name,
      bundleId: v.id,
      room: req.room,
      dir: null,
      commit,
      unchanged,
      replaced,
      files: v.files.size,
      tier: await trustOf(ctx.home.state, v.id),
      clojureChecker: v.clojureChecker,
      notes: notesFor(v.clojureChecker),
      manifest: manifestJson(v.manifest),
    };
  });
}

const turns = new Map<string, Promise<unknown>>();

/** Runs `f` after every earlier call with the same key has ended (within this process). */
async function inTurn<T>(key: string, f: () => Promise<T>): Promise<T> {
  const before = turns.get(key) ?? Promise.resolve();
  const mine = before.catch(() => {}).then(f);
  turns.set(key, mine);
  try {
    return await mine;
  } finally {
    if (turns.get(key) === mine) turns.delete(key);
  }
}

/** The files of a directory, null when there is none, "unreadable" when it cannot be read. */
async function existingFiles(
  dirs: BundleDirs,
  dir: string,
): Promise<FileMap | null | "unreadable"> {
  try {
    return (await dirs.read(dir)).files;
  } catch (e) {
    if (e instanceof DvergrError && e.code === "NOT_FOUND") return null;
    if (e instanceof DvergrError) return "unreadable";
    throw cannotWrite(dir, e);
  }
}

/**
 * A file system's refusal to make `dir` (a file where a parent goes, no such parent that
 * can be made, no permission) as the user's mistake it is; anything else as it is.
 */
function cannotWrite(dir: string, e: unknown): unknown {
  const refusals = [
    Deno.errors.NotADirectory,
    Deno.errors.NotFound,
    Deno.errors.PermissionDenied,
    Deno.errors.AlreadyExists,
    Deno.errors.IsADirectory,
  ];
  if (!refusals.some((c) => e instanceof c)) return e;
  return new DvergrError(
    "USAGE",
    `Cannot write "${dir}": ${(e as Error).message.replace(/ \(os error \d+\).*$/, "")}`,
    {
      hint: "Choose a directory that can be made there (its parent a directory you may write)",
      details: { dir },
    },
  );
}

/**
 * Verifies an export and writes its files as the directory `dir` (atomically). A
 * non-empty directory is refused unless `force` (then replaced whole); one that already
 * holds exactly this bundle is left as it is. The trust tier is the home's, when given.
 */
export async function importIntoDir(
  req: { text: string; file: string; dir: string; force?: boolean },
  dirs: BundleDirs,
  state?: OpContext["home"]["state"],
): Promise<ImportOutcome> {
  const v = verifyExport(req.text, { file: req.file });
  const current = await existingFiles(dirs, req.dir);
  const unchanged = current instanceof Map && sameFiles(current, v.files);
  const replaced = current === "unreadable" || (!unchanged && current !== null && current.size > 0);
  if (!unchanged) {
    await dirs.writeOnce(req.dir, v.files, { force: req.force }).catch((e) => {
      throw cannotWrite(req.dir, e);
    });
  }
  return {
    bundle: v.name,
    bundleId: v.id,
    room: null,
    dir: req.dir,
    commit: null,
    unchanged,
    replaced,
    files: v.files.size,
    tier: state ? await trustOf(state, v.id) : null,
    clojureChecker: v.clojureChecker,
    notes: notesFor(v.clojureChecker),
    manifest: manifestJson(v.manifest),
  };
}

/** What a promotion did. */
export interface PromoteOutcome {
  room: string;
  bundle: string;
  bundleId: string;
  /** The calibration run now; promotion happens only when it holds. */
  calibration: CalibrationResult;
  /** This content id is promoted on this host (now or before). */
  promoted: boolean;
  /** The promotion recorded before this call, if the content was already promoted. */
  previous: PromotionView | null;
  tier: TrustTier;
}

/**
 * Calibrates bundle `name` of `room` now and, only when that holds, records its content id
 * as promoted in the home's KV (outside every room, so nothing in a room can forge it).
 * The same content promoted before (under any name or room) keeps its first record.
 */
export async function promoteBundle(
  ctx: OpContext,
  req: { room: string; name: string },
): Promise<PromoteOutcome> {
  const fb = await readRoomBundle(ctx.home.rooms, req.room, req.name);
  const id = contentId(fb.files);
  const calibration = await calibrateFiles(fb, ctx.runner);
  const previous = await ctx.home.state.promotion(id);
  if (calibration.ok && !previous) {
    // Atomic: when another process promoted the same content meanwhile, its record stays.
    await ctx.home.state.putPromotion(id, {
      room: req.room,
      name: req.name,
      at: ctx.clock().toISOString(),
    });
  }
  return {
    room: req.room,
    bundle: req.name,
    bundleId: id,
    calibration,
    promoted: calibration.ok,
    previous: previous ? promotionView(previous) : null,
    tier: await trustOf(ctx.home.state, id),
  };
}

const promotionViewShape = z.object({ room: fields.room, bundle: fields.bundle, at: fields.time });

const CATALOG_LIST_FORMAT = defineFormat(
  "catalog-list",
  1,
  "The bundles of one room or of every room, with content id and trust tier (catalog_list / `dvergr list`).",
  z.object({
    rooms: z.array(z.object({
      room: fields.room,
      bundles: z.array(z.object({
        bundle: fields.bundle,
        bundleId: fields.bundleId,
        tier: fields.trust,
        title: z.string().nullable(),
        problems: z.number().int().describe("Shape problems (0: well formed)"),
        clojureChecker: z.boolean(),
        promotion: promotionViewShape.nullable(),
      })),
    })),
  }),
);

const exportFields = {
  bundle: fields.bundle,
  bundleId: fields.bundleId,
  title: z.string().nullable(),
  calibration: calibrationSummaryShape,
  clojureChecker: z.boolean(),
};

const CATALOG_EXPORT_FORMAT = defineFormat(
  "catalog-export",
  1,
  "A page of a bundle's export (EDN text in format dvergr-workflow/1) and what it holds (catalog_export).",
  z.object({
    room: fields.room,
    ...exportFields,
    exportedAt: fields.time,
    exportChars: z.number().int().describe("Characters of the whole export"),
    offset: z.number().int(),
    nextOffset: z.number().int().nullable(),
    export: z.string().describe("This page of the export text"),
  }),
);

/** What an import did (catalog_import, `dvergr import`). */
export const IMPORT_FORMAT = defineFormat(
  "import",
  1,
  "What an import of an export did (catalog_import / `dvergr import`).",
  z.object({
    bundle: fields.bundle,
    bundleId: fields.bundleId,
    room: fields.room.nullable().describe("The room imported into; null for a directory"),
    dir: z.string().nullable().describe("The directory written; null for a room"),
    commit: z.string().nullable(),
    unchanged: z.boolean(),
    replaced: z.boolean(),
    files: z.number().int(),
    tier: fields.trust.nullable(),
    clojureChecker: z.boolean(),
    notes: z.array(z.string()),
    manifest: typed<Record<string, unknown>>(z.looseObject({})),
  }),
);

/** What a promotion did (catalog_promote, `dvergr promote`). */
export const PROMOTE_FORMAT = defineFormat(
  "promote",
  1,
  "A bundle calibrated now and, when that holds, promoted on this host (catalog_promote / `dvergr promote`).",
  z.object({
    room: fields.room,
    bundle: fields.bundle,
    bundleId: fields.bundleId,
    calibration: calibrationShape,
    promoted: z.boolean(),
    previous: promotionViewShape.nullable(),
    tier: fields.trust,
  }),
);

/** What an export is, without its text (`dvergr export --json`). */
export { exportFields };

export const catalogList = defineOp({
  name: "catalog_list",
  title: "List room bundles",
  description:
    "Lists the workflow bundles (every workflows/<name>/workflow.edn) of one room, or of every room, with each bundle's content id, title, number of shape problems and trust tier on this host (room when its content id is promoted here, else ad-hoc).",
  kind: "read",
  toolset: "catalog",
  idempotent: true,
  roomScoped: true,
  input: z.strictObject({
    room: room.optional().describe("Only this room (default: every room)"),
  }),
  output: CATALOG_LIST_FORMAT,
  async handler(ctx, input) {
    const slugs = input.room !== undefined ? [input.room] : await ctx.home.rooms.listRooms();
    const rooms = [];
    for (const slug of slugs) {
      const bundles = [];
      for (const fb of await readRoomBundles(ctx.home.rooms, slug)) {
        bundles.push(await describeBundle(ctx, fb));
      }
      rooms.push({ room: slug, bundles });
    }
    return { rooms };
  },
});

export const catalogExport = defineOp({
  name: "catalog_export",
  title: "Export a bundle",
  description:
    "Exports bundle workflows/<name>/ of a room as one EDN map in format dvergr-workflow/1 (`export`): a manifest (name, content id, title, dvergr version, time, the calibration run now) and every file. catalog_import installs it elsewhere; trust does not travel with it. A big export comes in pages: while nextOffset is not null, call again with offset = nextOffset and exported_at = the first page's exportedAt, and concatenate the `export` texts.",
  kind: "read",
  toolset: "bench",
  roomScoped: true,
  input: z.strictObject({
    room,
    name,
    offset: z.number().int().min(0).optional().describe(
      "Where the page starts in the export text (default 0); give nextOffset for the next page",
    ),
    exported_at: z.string().optional().describe(
      "Needed with an offset: the exportedAt of the first page, so every page is of one export",
    ),
  }),
  output: CATALOG_EXPORT_FORMAT,
  async handler(ctx, input) {
    const offset = input.offset ?? 0;
    let at = ctx.clock();
    if (input.exported_at !== undefined) {
      at = new Date(input.exported_at);
      if (Number.isNaN(at.getTime())) {
        throw new DvergrError(
          "USAGE",
          `Cannot export page at ${offset}: exported_at ${
            JSON.stringify(input.exported_at)
          } is not a time`,
          { hint: "Pass the exportedAt the first page gave, unchanged" },
        );
      }
    } else if (offset > 0) {
      throw new DvergrError(
        "USAGE",
        `Cannot export page at ${offset} without exported_at: each call stamps the time it runs, and pages of two exports do not fit together`,
        { hint: "Pass the exportedAt the first page (offset 0) gave" },
      );
    }
    const fb = await readRoomBundle(ctx.home.rooms, input.room, input.name);
    const outcome = await exportFiles({ runner: ctx.runner, clock: () => at }, fb);
    const text = outcome.export;
    if (offset > text.length) {
      throw new DvergrError(
        "USAGE",
        `Cannot export from offset ${offset}: the export has ${text.length} characters`,
        { hint: "Start at offset 0 and follow nextOffset until it is null" },
      );
    }
    const head = {
      room: input.room,
      ...outcome,
      exportedAt: at.toISOString(),
      exportChars: text.length,
      offset,
      nextOffset: null as number | null,
      export: "",
    };
    const end = pageEnd(text, offset, PAGE_JSON_CHARS - JSON.stringify(head).length);
    return {
      ...head,
      export: text.slice(offset, end),
      nextOffset: end < text.length ? end : null,
    };
  },
});

/**
 * How much JSON a catalog_export result may hold: below MCP's 60,000 characters of result
 * text, beyond which a result is cut (and an export cut is no export).
 */
const PAGE_JSON_CHARS = 55_000;

/**
 * Where a page of `text` from `start` ends so that it takes at most `budget` characters as
 * JSON (escapes counted) and never splits a surrogate pair; at least one character.
 */
function pageEnd(text: string, start: number, budget: number): number {
  let used = 2; // the quotes
  let i = start;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length &&
      (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    const cost = pair
      ? 2
      : c === 0x22 || c === 0x5c || c === 8 || c === 9 || c === 10 || c === 12 || c === 13
      ? 2
      : c < 0x20 || (c >= 0xd800 && c <= 0xdfff)
      ? 6
      : 1;
    if (used + cost > budget && i > start) break;
    used += cost;
    i += pair ? 2 : 1;
  }
  return i;
}

export const catalogImport = defineOp({
  name: "catalog_import",
  title: "Import a bundle",
  description:
    "Installs an export (the EDN text catalog_export or `dvergr export` gives) as workflows/<as or its name>/ of a room, in one commit, after verifying it: format dvergr-workflow/1, a workflow name, a well-formed bundle, and files whose recomputed content id is the one the manifest names. A target holding other files is refused unless force (then replaced). Its trust tier is ad-hoc unless this content is promoted on this host.",
  kind: "write",
  toolset: "bench",
  roomScoped: true,
  input: z.strictObject({
    room,
    export: z.string().describe("The export: EDN text in format dvergr-workflow/1"),
    as: z.string().optional().describe("Install under this name instead of the manifest's"),
    force: z.boolean().optional().describe(
      "Replace a target directory that holds other files",
    ),
  }),
  output: IMPORT_FORMAT,
  handler(ctx, input) {
    return importIntoRoom(ctx, {
      room: input.room,
      text: input.export,
      file: "export",
      as: input.as,
      force: input.force,
    });
  },
});

export const catalogPromote = defineOp({
  name: "catalog_promote",
  title: "Promote a bundle",
  description:
    "Calibrates bundle workflows/<name>/ of a room now and, only when that holds, records its content id as promoted on this host (outside every room): its checker's trust tier becomes room, under any name. A changed bundle has a new id and is ad-hoc again.",
  kind: "write",
  toolset: "admin",
  idempotent: true,
  roomScoped: true,
  input: z.strictObject({ room, name }),
  output: PROMOTE_FORMAT,
  handler(ctx, input) {
    return promoteBundle(ctx, input);
  },
});

/** The catalog ops over room bundles, in the order tools are listed. */
export const CATALOG_BUNDLE_OPS: Op[] = [catalogList, catalogExport, catalogImport, catalogPromote];

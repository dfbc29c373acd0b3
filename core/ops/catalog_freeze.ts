/**
 * Freezing a live bundle (docs/compatibility.md §9.4): the pages its attempts fetched on this home —
 * read from their evidence, never fetched again — become the bundle `<name>-frozen` (or
 * `as`) in the same room: `:web :frozen`, web.edn, title suffixed " (frozen web)", pages of
 * blocked hosts dropped. `dvergr freeze` and MCP `catalog_freeze` call `freezeBundle`.
 */
import { z } from "zod";
import { defineFormat, fields } from "../json_format.ts";
import { DvergrError } from "../errors.ts";
import { defineOp, type Op } from "./op.ts";
import type { Bundle } from "../bundle/types.ts";
import { parseBundle } from "../bundle/parse.ts";
import { checkBundleName } from "../bundle/bundle_name.ts";
import { contentId } from "../bundle/content_id.ts";
import type { AttemptRecord } from "../bench/records.ts";
import { frozenPages } from "../web/frozen.ts";
import { freezeFiles, frozenName } from "../web/freeze.ts";
import { getJson } from "../ports/blob_store.ts";
import type { Home } from "../ports/home.ts";
import { readRoomBundle } from "./room_bundles.ts";
import { syncBundle } from "../ports/room_store.ts";

export interface FreezeResult {
  room: string;
  /** The frozen bundle's name (workflows/<name>/ of the room). */
  bundle: string;
  /** Its content id (a bundle of its own). */
  bundleId: string;
  title: string;
  /** Pages in its web.edn. */
  pages: number;
  /** URLs left out because their host is blocked. */
  dropped: string[];
  /** Experiments whose attempts' pages were read. */
  experiments: string[];
  /** The commit that wrote it, or null when the room already held exactly these files. */
  commit: string | null;
}

/** Fetched pages of every attempt of the bundle's experiments on this home, oldest first. */
async function recordedPages(
  home: Home,
  bundle: Bundle,
  experiment: string | undefined,
): Promise<
  { fetched: Record<string, string>[]; titles: Record<string, string>[]; experiments: string[] }
> {
  let metas = (await home.state.listExperiments()).filter((m) => m.bundleId === bundle.id);
  if (experiment !== undefined) {
    metas = metas.filter((m) => m.id === experiment);
    if (metas.length === 0) {
      throw new DvergrError(
        "NOT_FOUND",
        `Cannot freeze "${bundle.name}" from experiment ${experiment}: this home has no experiment of that id on this bundle (${bundle.id})`,
        {
          hint:
            "Leave out --experiment to use every experiment of the bundle, or list them in the report",
        },
      );
    }
  }
  const records: AttemptRecord[] = [];
  for (const m of metas) records.push(...await home.state.attemptHistory(m.id));
  records.sort((a, b) => (a.startedAt < b.startedAt ? -1 : a.startedAt > b.startedAt ? 1 : 0));
  const fetched: Record<string, string>[] = [];
  const titles: Record<string, string>[] = [];
  for (const r of records) {
    if (!r.web || r.web.mode !== "live" || r.evidenceRef === null) continue;
    const ev = await getJson<{ web?: { pagesRef?: string | null } }>(home.blobs, r.evidenceRef);
    const ref = ev?.web?.pagesRef;
    if (!ref) continue;
    const pages = await getJson<
      { fetched?: Record<string, string>; titles?: Record<string, string> }
    >(
      home.blobs,
      ref,
    );
    if (!pages?.fetched) continue;
    fetched.push(pages.fetched);
    titles.push(pages.titles ?? {});
  }
  return { fetched, titles, experiments: metas.map((m) => m.id) };
}

/**
 * Freezes `bundle` (as it is in `room` of the home, or the directory it was benchmarked
 * from) into the room as `as` (default `<name>-frozen`). Exit 1 `Nothing to freeze: no
 * fetched pages` when its live attempts fetched nothing that can be frozen.
 */
export async function freezeBundle(
  home: Home,
  bundle: Bundle,
  opts: { room: string; as?: string; experiment?: string },
): Promise<FreezeResult & { files: Map<string, string> }> {
  const target = opts.as ?? frozenName(bundle.name);
  checkBundleName(target);
  if (target === bundle.name) {
    throw new DvergrError("USAGE", `Cannot freeze "${bundle.name}" into itself`, {
      hint: `Leave out --as (the default is "${frozenName(bundle.name)}") or name another bundle`,
    });
  }
  if (bundle.definition.web === "frozen") {
    throw new DvergrError("USAGE", `Cannot freeze "${bundle.name}": its web is frozen already`, {
      hint: "Freeze the live bundle it was made from",
    });
  }
  const { fetched, titles, experiments } = await recordedPages(home, bundle, opts.experiment);
  const frozen = freezeFiles(bundle, frozenPages(fetched, titles));
  const commit = await syncBundle(home.rooms, opts.room, target, frozen.files);
  const parsed = parseBundle({ name: target, files: frozen.files });
  return {
    room: opts.room,
    bundle: target,
    bundleId: contentId(frozen.files),
    title: parsed.definition.title,
    pages: frozen.pages,
    dropped: frozen.dropped,
    experiments,
    commit,
    files: frozen.files,
  };
}

/** A frozen bundle made (catalog_freeze, `dvergr freeze`). */
export const FREEZE_FORMAT = defineFormat(
  "freeze",
  1,
  "A live bundle's fetched pages made into a frozen bundle (catalog_freeze / `dvergr freeze`).",
  z.object({
    room: fields.room,
    bundle: fields.bundle.describe("The frozen bundle's name"),
    bundleId: fields.bundleId,
    title: z.string(),
    pages: z.number().int().describe("Pages in its web.edn"),
    dropped: z.array(z.string()).describe("URLs left out because their host is blocked"),
    experiments: z.array(z.string()).describe("Experiments whose attempts' pages were read"),
    commit: z.string().nullable(),
    home: z.string().optional().describe("dvergr freeze: the home it was written in"),
    directory: z.string().nullable().optional().describe(
      "dvergr freeze of a bundle directory: where it was also written",
    ),
  }),
);

const freezeOp = defineOp({
  name: "catalog_freeze",
  title: "Freeze a live bundle's web",
  description:
    "Makes a stable benchmark of a live one: the pages the attempts of bundle workflows/<name>/ fetched on this home become a new bundle workflows/<name>-frozen/ (or `as`) whose workflow.edn says :web :frozen and whose web.edn holds those pages as text (pages of blocked hosts dropped). Its attempts meet only those pages: search lexical over them, 404 otherwise, no network. It is a bundle of its own (new content id), calibrated and promoted on its own. Fails with `Nothing to freeze: no fetched pages` when the attempts fetched nothing.",
  kind: "write",
  toolset: "bench",
  roomScoped: true,
  input: z.strictObject({
    room: z.string().describe("Room slug, e.g. `books`"),
    name: z.string().describe("The live bundle: workflows/<name>/ of the room"),
    as: z.string().optional().describe("Name of the frozen bundle (default `<name>-frozen`)"),
  }),
  output: FREEZE_FORMAT,
  async handler(ctx, input): Promise<FreezeResult> {
    const bundle = parseBundle(await readRoomBundle(ctx.home.rooms, input.room, input.name));
    const { files: _, ...result } = await freezeBundle(ctx.home, bundle, {
      room: input.room,
      as: input.as,
    });
    return result;
  },
});

export const CATALOG_FREEZE_OPS: Op[] = [freezeOp as unknown as Op];

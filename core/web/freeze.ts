/**
 * `freeze` (docs/compatibility.md §9.4): a live bundle plus the pages its attempts fetched become a new
 * bundle whose attempts meet only those pages: workflow.edn re-printed with `:web :frozen`
 * and the title suffixed " (frozen web)" (comments are lost), and web.edn holding the pages.
 * Pages of blocked hosts are dropped. A bundle of its own: new content id, calibrated and
 * promoted on its own.
 */
import { DvergrError } from "../errors.ts";
import type { FileMap } from "../bundle/file_map.ts";
import type { Bundle } from "../bundle/types.ts";
import { readEdn } from "../edn/read.ts";
import { type EdnMap, type EdnValue, isEdnMap, kw } from "../edn/values.ts";
import { writeEdn } from "../edn/write.ts";
import type { FrozenPages } from "./frozen.ts";
import { hostOf, isUnder, normalizeHost } from "./host.ts";

export const FROZEN_TITLE_SUFFIX = " (frozen web)";

/** The default name of a frozen bundle. */
export function frozenName(name: string): string {
  return `${name}-frozen`;
}

/** The pages a frozen bundle may hold: those of hosts not under a blocked source. */
export function pagesOutsideBlocked(
  pages: FrozenPages,
  blocked: readonly string[],
): { kept: FrozenPages; dropped: string[] } {
  const deny = blocked.map(normalizeHost);
  const kept: FrozenPages = {};
  const dropped: string[] = [];
  for (const [url, page] of Object.entries(pages)) {
    const host = hostOf(url);
    if (host !== null && deny.some((d) => isUnder(host, d))) dropped.push(url);
    else kept[url] = page;
  }
  return { kept, dropped };
}

/** Sets `:key` in an EDN map, in place of an existing `:key` (or "key") so the order stays. */
function setKey(m: EdnMap, key: string, value: EdnValue): EdnMap {
  const k = kw(key);
  const out: EdnMap = new Map();
  let set = false;
  for (const [existing, v] of m) {
    if (existing === k || existing === key) {
      if (!set) out.set(k, value);
      set = true;
    } else out.set(existing, v);
  }
  if (!set) out.set(k, value);
  return out;
}

/**
 * The files of the frozen bundle. Throws (exit 1) `Nothing to freeze: no fetched pages`
 * when no page is left after dropping blocked hosts.
 */
export function freezeFiles(
  bundle: Bundle,
  pages: FrozenPages,
): { files: FileMap; dropped: string[]; pages: number } {
  const { kept, dropped } = pagesOutsideBlocked(pages, bundle.definition.blockedSources ?? []);
  const urls = Object.keys(kept).sort();
  if (urls.length === 0) {
    throw new DvergrError("NOT_FOUND", "Nothing to freeze: no fetched pages", {
      result: true,
      hint:
        "Benchmark the live bundle first (its attempts' fetched pages are what freeze keeps), or name the experiment with --experiment",
      details: { bundle: bundle.name, dropped },
    });
  }
  const wf = readEdn(bundle.files.get("workflow.edn") ?? "{}", { file: "workflow.edn" });
  if (!isEdnMap(wf)) throw new Error("a parsed bundle's workflow.edn is a map");
  const frozenWf = setKey(
    setKey(wf, "web", kw("frozen")),
    "title",
    bundle.definition.title + FROZEN_TITLE_SUFFIX,
  );
  const web: EdnMap = new Map();
  for (const url of urls) {
    web.set(
      url,
      new Map<EdnValue, EdnValue>([[kw("title"), kept[url].title], [kw("body"), kept[url].body]]),
    );
  }
  const files: FileMap = new Map(bundle.files);
  files.set("workflow.edn", writeEdn(frozenWf, { pretty: true }) + "\n");
  files.set("web.edn", writeEdn(web, { pretty: true }) + "\n");
  return { files, dropped, pages: urls.length };
}

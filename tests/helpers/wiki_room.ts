/**
 * A home with room "wiki": the example bundle examples/workflows/wiki-keeper installed (its
 * workflow.edn's :review replaced when asked), the documents of its fixtures under docs/ and
 * a wiki holding only its index: what a production run of the bundle starts from.
 */
import { join } from "node:path";
import { openHome } from "../../adapters/store/kv/home.ts";
import { readBundleDir } from "../../adapters/files/bundle_dir.ts";

export const WIKI_KEEPER = new URL("../../examples/workflows/wiki-keeper", import.meta.url)
  .pathname;

/** The example's :review map, as written in its workflow.edn. */
const REVIEW_RE = /:review \{[\s\S]*\}\}\s*$/;

/** Makes a home holding room "wiki"; `review` replaces the bundle's :review map (EDN text). */
export async function wikiHome(review?: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-wiki-" });
  const bundle = await readBundleDir(WIKI_KEEPER);
  const home = await openHome(dir);
  try {
    const files = new Map<string, string>();
    for (const [p, text] of bundle.files) {
      const t = p === "workflow.edn" && review !== undefined
        ? text.replace(REVIEW_RE, `:review ${review}}\n`)
        : text;
      files.set(`workflows/wiki-keeper/${p}`, t);
      if (p.startsWith("fixtures/")) files.set(p.slice("fixtures/".length), text);
    }
    await home.rooms.createRoom("wiki");
    await home.rooms.writeFiles("wiki", files, "The wiki keeper, the documents, an empty wiki");
  } finally {
    await home.close();
  }
  return dir;
}

/** The room's repository directory in a home. */
export function wikiRepo(home: string): string {
  return join(home, "rooms", "wiki");
}

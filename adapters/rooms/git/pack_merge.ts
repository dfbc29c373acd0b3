/**
 * Keeps a room's pack count small: merges the small packs (geometrically, as
 * `git repack --geometric=2` does) and the loose objects into one pack by copying entries as
 * they are, then removes what it merged. Without it every commit would leave one more pack
 * for each reader to open.
 *
 * Permissions: --allow-read and --allow-write on the room's directory.
 */
import * as fs from "node:fs";
import { join } from "node:path";
import { OFS_DELTA, REF_DELTA } from "../../../core/codecs/git/objects.ts";
import { installPack, ofsBytes, PackBuilder } from "./pack_write.ts";
import type { PackIndex } from "./pack_read.ts";
import { withObjects } from "./object_reader.ts";
import { damaged } from "../../../core/codecs/git/damaged.ts";

/**
 * The packs to merge: the smallest first, then each next one while it is less than twice
 * what is merged so far, as git's `repack --geometric=2` does; so a room's big pack is copied
 * only when the small ones add up to half of it, and a commit costs the same in a big room as
 * in a small one. At least enough are taken to leave `maxPacks / 2` packs.
 */
export function packsToMerge(packs: PackIndex[], loose: number, maxPacks: number): PackIndex[] {
  const bySize = [...packs].sort((a, b) => a.starts.size - b.starts.size);
  const atLeast = Math.max(2, packs.length - Math.floor(maxPacks / 2));
  let merged = loose;
  let n = 0;
  while (n < bySize.length && (n < atLeast || bySize[n].starts.size < 2 * merged)) {
    merged += bySize[n].starts.size;
    n++;
  }
  return bySize.slice(0, n);
}

/**
 * Merges the small packs (`packsToMerge`; never `.keep` ones) and every loose object into one
 * pack, then removes what it merged. Entries are copied as they are (no inflating, no
 * deflating); an OFS_DELTA's distance to its base is rewritten for its new place. Readers
 * that listed the old packs retry (`withObjects`); nothing is removed before the merged pack
 * is in place.
 */
export async function consolidate(gitdir: string, maxPacks: number): Promise<void> {
  const packDir = join(gitdir, "objects", "pack");
  await withObjects(gitdir, async (db) => {
    const builder = new PackBuilder();
    const placed = new Map<string, number>();
    const merged: PackIndex[] = [];
    const loose = [...db.looseOids()];
    const packs = db.packs.filter((p) => !fs.existsSync(join(packDir, `pack-${p.name}.keep`)));
    const chosen = packsToMerge(packs, loose.length, maxPacks);
    if (chosen.length < 2 && loose.length === 0) return;
    for (const pack of chosen) {
      const bytes = db.packBytes(pack);
      merged.push(pack);
      const entries = [...pack.starts].sort((a, b) => a[1] - b[1]);
      const moved = new Map<number, number>();
      for (const [oid, start] of entries) {
        const already = placed.get(oid);
        if (already !== undefined) {
          moved.set(start, already);
          continue;
        }
        const raw = bytes.subarray(start, pack.ends.get(start));
        let parts = [raw];
        const code = (raw[0] >> 4) & 7;
        if (code === REF_DELTA) {
          // Its base may be in a pack left out of the merge: store the object whole.
          const { type, content } = db.read(oid);
          const at = builder.addObject({ oid, type, content });
          moved.set(start, at);
          placed.set(oid, at);
          continue;
        }
        if (code === OFS_DELTA) {
          let p = 1;
          while (raw[p - 1] & 0x80) p++;
          const headerEnd = p;
          let c = raw[p++];
          let distance = c & 0x7f;
          while (c & 0x80) {
            c = raw[p++];
            distance = (distance + 1) * 128 + (c & 0x7f);
          }
          const base = moved.get(start - distance);
          if (base === undefined) {
            throw damaged(gitdir, `pack ${pack.name} has a delta without base`);
          }
          parts = [raw.subarray(0, headerEnd), ofsBytes(builder.offset - base), raw.subarray(p)];
        }
        const at = builder.addRaw(oid, parts);
        moved.set(start, at);
        placed.set(oid, at);
      }
    }
    for (const oid of loose) {
      if (placed.has(oid)) continue;
      const { type, content } = db.readLoose(oid);
      placed.set(oid, builder.addObject({ oid, type, content }));
    }
    if (builder.count === 0) return;
    const built = builder.finish();
    await installPack(gitdir, built);
    for (const pack of merged) {
      if (pack.name === built.name) continue;
      // The index first: readers (and git) find packs by it.
      for (const ext of ["idx", "pack", "rev", "bitmap", "mtimes"]) {
        await Deno.remove(join(packDir, `pack-${pack.name}.${ext}`)).catch(() => {});
      }
    }
    for (const oid of loose) {
      await Deno.remove(join(gitdir, "objects", oid.slice(0, 2), oid.slice(2))).catch(() => {});
    }
    for (const dir of new Set(loose.map((oid) => oid.slice(0, 2)))) {
      await Deno.remove(join(gitdir, "objects", dir)).catch(() => {}); // only when empty
    }
    // Temporary files of writers that died mid-pack.
    for (const f of fs.readdirSync(packDir)) {
      if (!f.startsWith("tmp_")) continue;
      const st = await Deno.stat(join(packDir, f)).catch(() => null);
      if (st?.mtime && Date.now() - st.mtime.getTime() > 3_600_000) {
        await Deno.remove(join(packDir, f)).catch(() => {});
      }
    }
  });
}

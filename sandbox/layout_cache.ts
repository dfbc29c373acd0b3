/**
 * Where the host keeps the memory layout its checker.js workers found in QuickJS's module
 * (sandbox/known_layout.ts), so that the next worker, of this command or the next one, is
 * given it instead of finding it: `$XDG_CACHE_HOME/dvergr/sandbox-layouts/<identity>.json`,
 * else under `$HOME/.cache`; nowhere without either. The identity is the sandbox's
 * (sandbox/load_cache.ts: dvergr's and Deno's versions, the sandbox modules and deno.json,
 * which pins QuickJS's version). A worker checks a layout it is given against its own
 * module and finds its own when it does not fit; a file that cannot be read or written is a
 * miss.
 *
 * Permissions: read and write of the cache directory, read of sandbox/ and deno.json.
 */
import { join } from "../core/path.ts";
import type { KnownLayout } from "./known_layout.ts";
import { dvergrCacheDir, sandboxIdentity } from "./load_cache.ts";

/** The layouts a pool gives its workers and keeps from them. */
export interface LayoutStore {
  known(): KnownLayout | undefined;
  keep(layout: KnownLayout): void;
}

/** The file of this sandbox's layout, from the environment (null: nowhere). */
export function layoutFile(env: (name: string) => string | undefined): string | null {
  const dir = dvergrCacheDir(env);
  return dir === null ? null : join(dir, "sandbox-layouts", `${sandboxIdentity()}.json`);
}

/**
 * The layout kept for this sandbox, if any: with no layout kept at all (a first check) that
 * is known from one stat, without the sandbox's identity.
 */
export function keptLayout(env: (name: string) => string | undefined): KnownLayout | undefined {
  const dir = dvergrCacheDir(env);
  if (dir === null) return undefined;
  try {
    if (!Deno.statSync(join(dir, "sandbox-layouts")).isDirectory) return undefined;
  } catch {
    return undefined;
  }
  return readLayout(layoutFile(env)!);
}

/** The layout kept in `file`, if any (the worker checks it). */
export function readLayout(file: string): KnownLayout | undefined {
  try {
    const value = JSON.parse(Deno.readTextFileSync(file));
    return value !== null && typeof value === "object" ? value as KnownLayout : undefined;
  } catch {
    return undefined;
  }
}

/** A store over `file` (none: a store of this process only). */
export function layoutStore(file: string | null): LayoutStore {
  let known = file === null ? undefined : readLayout(file);
  return {
    known: () => known,
    keep(layout) {
      known = layout;
      if (file === null) return;
      try {
        Deno.mkdirSync(join(file, ".."), { recursive: true });
        // Written at once: a one-shot command exits right after its verdicts.
        const tmp = `${file}.${crypto.randomUUID()}.tmp`;
        Deno.writeTextFileSync(tmp, JSON.stringify(layout));
        Deno.renameSync(tmp, file);
      } catch {
        // Not kept: the next worker finds the layout itself.
      }
    },
  };
}

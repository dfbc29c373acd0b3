/** Test helpers for the sandbox image caches (sandbox/quickjs_image_cache.ts). */

/**
 * Removes `dir` once the image writes a pool left under way (a checker image is kept after
 * the call that made it has answered) have ended.
 */
export async function removeSettled(dir: string): Promise<void> {
  for (let tries = 0;; tries++) {
    try {
      return await Deno.remove(dir, { recursive: true });
    } catch (e) {
      if (tries >= 100) throw e;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

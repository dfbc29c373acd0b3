/**
 * A hint to collect garbage after a long stream of short-lived objects (records read back,
 * records committed). V8 lets such garbage pile up to its heap limit before a full
 * collection, and the pages it then frees stay resident: a 100,000-cell run peaked ~30%
 * above a 10,000-cell one for that alone. A full collection every few thousand records costs
 * a few milliseconds each and keeps the peak where the live data is.
 *
 * It needs V8's `--expose-gc` (dvergr's tasks pass it, see core/permissions.ts); without it
 * the hint does nothing.
 */

/** The runtime's `gc()`, when V8 exposes it. */
export function exposedGc(): (() => void) | null {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === "function" ? () => gc() : null;
}

/** Counts units of work and collects garbage after every `every` of them. */
export function gcHint(every: number, gc: (() => void) | null = exposedGc()): (n?: number) => void {
  let count = 0;
  return (n = 1) => {
    count += n;
    if (count < every) return;
    count = 0;
    gc?.();
  };
}

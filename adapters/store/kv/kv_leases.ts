/**
 * Cell leases in the state store's KV, one cell at a time (`["lease", experiment, cell]`):
 * taken and renewed by check-and-set, expiring by themselves (`expireIn`, and their `until`
 * time, which is what counts), so a killed holder's cells are freed.
 */
import type { CellLease, LeaseTake } from "../../../core/ports/cell_lease.ts";
import type { StateStore } from "../../../core/ports/state_store.ts";
import { type KvValues, retryLocked } from "./kv_values.ts";

/** The one-cell lease operations of the store over `s`. */
export function leaseMethods(
  s: KvValues,
): Pick<StateStore, "takeLease" | "renewLease" | "releaseLease" | "breakLease" | "leaseOf"> {
  return {
    takeLease: (id, cell, holder, ms, at) => takeLease(s, ["lease", id, cell], holder, ms, at),
    renewLease: (id, cell, owner, ms, at) => renewLease(s, ["lease", id, cell], owner, ms, at),
    releaseLease: (id, cell, owner) => releaseLease(s, ["lease", id, cell], owner),
    breakLease: (id, cell, owner) => breakLease(s, ["lease", id, cell], owner),
    leaseOf: async (id, cell) =>
      (await retryLocked(s, () => s.kv.get<CellLease>(["lease", id, cell]))).value,
  };
}

async function takeLease(
  s: KvValues,
  key: Deno.KvKey,
  holder: Omit<CellLease, "until">,
  ms: number,
  at?: number,
): Promise<LeaseTake> {
  for (;;) {
    const entry = await retryLocked(s, () => s.kv.get<CellLease>(key));
    const now = at ?? Date.now();
    const held = entry.value;
    if (held && held.owner !== holder.owner && held.until > now) {
      return { ok: false, holder: held };
    }
    const lease: CellLease = { ...holder, until: now + ms };
    const res = await retryLocked(
      s,
      () => s.kv.atomic().check(entry).set(key, lease, { expireIn: ms }).commit(),
    );
    if (res.ok) return { ok: true, lease };
    // Another process changed the lease between the read and the commit: look again.
  }
}

async function renewLease(
  s: KvValues,
  key: Deno.KvKey,
  owner: string,
  ms: number,
  at?: number,
): Promise<boolean> {
  const entry = await retryLocked(s, () => s.kv.get<CellLease>(key));
  if (entry.value?.owner !== owner) return false;
  const lease: CellLease = { ...entry.value, until: (at ?? Date.now()) + ms };
  const res = await retryLocked(
    s,
    () => s.kv.atomic().check(entry).set(key, lease, { expireIn: ms }).commit(),
  );
  return res.ok;
}

async function releaseLease(s: KvValues, key: Deno.KvKey, owner: string): Promise<void> {
  for (;;) {
    const entry = await retryLocked(s, () => s.kv.get<CellLease>(key));
    if (entry.value?.owner !== owner) return;
    const res = await retryLocked(s, () => s.kv.atomic().check(entry).delete(key).commit());
    if (res.ok) return;
  }
}

async function breakLease(s: KvValues, key: Deno.KvKey, owner: string): Promise<boolean> {
  const entry = await retryLocked(s, () => s.kv.get<CellLease>(key));
  if (entry.value?.owner !== owner) return false;
  const res = await retryLocked(s, () => s.kv.atomic().check(entry).delete(key).commit());
  return res.ok;
}

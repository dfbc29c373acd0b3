/**
 * Many cells' leases at once, one commit per LEASES_PER_COMMIT cells, each by check-and-set
 * as one at a time. A lease this handle wrote has a versionstamp it remembers, so renewing
 * or releasing it needs no read first; a remembered versionstamp that is stale (another
 * process changed the lease) only makes the check fail, and the cell then goes the
 * one-at-a-time way.
 */
import type { CellLease, LeaseTake } from "../../../core/ports/cell_lease.ts";
import {
  type Batcher,
  chunks,
  getMany,
  leaseKey,
  LEASES_PER_COMMIT,
  type Stamped,
  stampKey,
} from "./batch_state.ts";

/** The leases of `cells` that `owner` holds, with versionstamps: remembered, else read. */
export async function ownLeases(
  b: Batcher,
  id: string,
  cells: string[],
  owner: string,
): Promise<(Stamped | null)[]> {
  const known = cells.map((c) => {
    const s = b.stamps.get(stampKey(id, c));
    return s && s.lease.owner === owner ? s : undefined;
  });
  const unknown = cells.filter((_, i) => known[i] === undefined);
  const read = unknown.length === 0
    ? []
    : await getMany<CellLease>(b, unknown.map((c) => leaseKey(id, c)));
  let r = 0;
  return known.map((k) => {
    if (k) return k;
    const e = read[r++];
    return e.value?.owner === owner ? { lease: e.value, versionstamp: e.versionstamp! } : null;
  });
}

/** takeLeases() of the port. */
export async function takeLeases(
  b: Batcher,
  id: string,
  cells: string[],
  holder: { pid: number; host: string; owner: string },
  ms: number,
  at: number | undefined,
): Promise<LeaseTake[]> {
  return await perCommit(cells, (part) => takeChunk(b, id, part, holder, ms, at));
}

/** `each` over the cells, at most one commit's worth of leases at a time, in order. */
async function perCommit<T>(cells: string[], each: (part: string[]) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  for (const part of chunks(cells, LEASES_PER_COMMIT)) out.push(...await each(part));
  return out;
}

async function takeChunk(
  b: Batcher,
  id: string,
  cells: string[],
  holder: { pid: number; host: string; owner: string },
  ms: number,
  at: number | undefined,
): Promise<LeaseTake[]> {
  for (let round = 0; round < 3; round++) {
    const entries = await getMany<CellLease>(b, cells.map((c) => leaseKey(id, c)));
    const now = at ?? Date.now();
    const lease: CellLease = { ...holder, until: now + ms };
    const op = b.p.kv.atomic();
    const takes: LeaseTake[] = entries.map((entry, i) => {
      const held = entry.value;
      if (held && held.owner !== holder.owner && held.until > now) {
        return { ok: false, holder: held };
      }
      op.check(entry).set(leaseKey(id, cells[i]), lease, { expireIn: ms });
      return { ok: true, lease };
    });
    if (!takes.some((t) => t.ok)) return takes;
    const res = await b.p.retryLocked(() => op.commit());
    if (res.ok) {
      takes.forEach((t, i) => {
        if (t.ok) b.stamps.set(stampKey(id, cells[i]), { lease, versionstamp: res.versionstamp });
      });
      return takes;
    }
    // Another process changed one of the leases between the read and the commit: look again.
  }
  // Contended: one cell at a time, each with its own retry.
  const takes: LeaseTake[] = [];
  for (const c of cells) {
    b.stamps.delete(stampKey(id, c));
    takes.push(await b.p.one.takeLease(id, c, holder, ms, at));
  }
  return takes;
}

/** renewLeases() of the port. */
export async function renewLeases(
  b: Batcher,
  id: string,
  cells: string[],
  owner: string,
  ms: number,
  at: number | undefined,
): Promise<boolean[]> {
  return await perCommit(cells, (part) => renewChunk(b, id, part, owner, ms, at));
}

async function renewChunk(
  b: Batcher,
  id: string,
  cells: string[],
  owner: string,
  ms: number,
  at: number | undefined,
  retried = false,
): Promise<boolean[]> {
  const held = await ownLeases(b, id, cells, owner);
  const now = at ?? Date.now();
  const op = b.p.kv.atomic();
  const renewed = held.map((h, i) => {
    if (!h) return null;
    const lease = { ...h.lease, until: now + ms };
    op.check({ key: leaseKey(id, cells[i]), versionstamp: h.versionstamp })
      .set(leaseKey(id, cells[i]), lease, { expireIn: ms });
    return lease;
  });
  if (renewed.every((l) => l === null)) return cells.map(() => false);
  const res = await b.p.retryLocked(() => op.commit());
  if (res.ok) {
    return renewed.map((lease, i) => {
      if (lease) b.stamps.set(stampKey(id, cells[i]), { lease, versionstamp: res.versionstamp });
      return lease !== null;
    });
  }
  // A lease changed under a remembered versionstamp (released by its record's commit while
  // this renewal was on its way, or taken over after it ran out): read them all again.
  for (const c of cells) b.stamps.delete(stampKey(id, c));
  if (!retried) return await renewChunk(b, id, cells, owner, ms, at, true);
  const out: boolean[] = [];
  for (const c of cells) out.push(await b.p.one.renewLease(id, c, owner, ms, at));
  return out;
}

/** releaseLeases() of the port. */
export async function releaseLeases(
  b: Batcher,
  id: string,
  cells: string[],
  owner: string,
): Promise<void> {
  for (const part of chunks(cells, LEASES_PER_COMMIT)) await releaseChunk(b, id, part, owner);
}

async function releaseChunk(
  b: Batcher,
  id: string,
  cells: string[],
  owner: string,
  retried = false,
): Promise<void> {
  const held = await ownLeases(b, id, cells, owner);
  const op = b.p.kv.atomic();
  let any = false;
  held.forEach((h, i) => {
    if (!h) return;
    any = true;
    op.check({ key: leaseKey(id, cells[i]), versionstamp: h.versionstamp })
      .delete(leaseKey(id, cells[i]));
  });
  for (const c of cells) b.stamps.delete(stampKey(id, c));
  if (!any) return;
  const res = await b.p.retryLocked(() => op.commit());
  if (res.ok) return;
  if (!retried) return await releaseChunk(b, id, cells, owner, true);
  for (const c of cells) await b.p.one.releaseLease(id, c, owner);
}

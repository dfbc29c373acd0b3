/**
 * The state store's batch operations (state_store.ts spreads them into its StateStore): the
 * leases of many cells taken, renewed or released, many cells' latest records read, and many
 * finished attempts committed, each in as few KV operations as KV's limits allow. A run of
 * fast cells does one commit per group of cells instead of four per cell; the semantics of
 * the one-cell methods are kept, cell by cell:
 *
 * - a group of records is one atomic commit (every record or none); when it fails because
 *   another process recorded one of its tries first, each record is committed alone, so the
 *   others are kept and only that one reports false;
 * - a lease is taken, renewed and released by check-and-set, as one at a time.
 *
 * A lease this store handle wrote has a versionstamp it remembers, so renewing or releasing
 * it needs no read first; a remembered versionstamp that is stale (another process changed
 * the lease) only makes the check fail, and the cell then goes the one-at-a-time way.
 *
 * KV's limits (local SQLite, Deno 2.9): at most 10 keys per getMany, 100 checks and 1,000
 * mutations per atomic operation, 819,200 bytes of mutations in all.
 */
import { type AttemptRecord, cellKey } from "../../../core/bench/records.ts";
import type { CellLease, CellLeaseOps, LeaseTake } from "../../../core/ports/cell_lease.ts";
import type { BlobStore } from "../../../core/ports/blob_store.ts";
import type { StateBatches } from "../../../core/ports/state_store.ts";

/** The one-cell operations a batch falls back to (the state store's, same semantics). */
interface OneCell extends CellLeaseOps {
  putAttempt(record: AttemptRecord): Promise<boolean>;
}

/** What the batch operations need of the store that holds them. */
export interface BatchParts {
  kv: Deno.Kv;
  /** The blob store the state store was opened on. */
  files: BlobStore;
  /** The stored form of a value and its JSON length (what its KV bytes are bounded by). */
  encodeSized(value: unknown): Promise<{ stored: unknown; chars: number }>;
  decode<T>(stored: unknown): Promise<T | null>;
  retryLocked<T>(f: () => Promise<T>): Promise<T>;
  /** The room of an experiment (whose version a record moves), or null when unknown. */
  experimentRoom(id: string): Promise<string | null>;
  /** The one-cell operations, the fallback when a batch cannot be committed as one. */
  one: OneCell;
}

/** Keys per getMany call. */
const READ_KEYS = 10;
/** Cells per lease commit (one check each; KV allows 100). */
const LEASES_PER_COMMIT = 90;
/** Records per commit (two checks each: the try number and the lease released with it). */
const RECORDS_PER_COMMIT = 40;
/**
 * Bytes of mutations per commit, under KV's 819,200. A record is stored twice (the cell's
 * latest and its try); V8 may spend up to ~3 bytes per JSON character (a double for "0.5").
 */
const COMMIT_BYTES = 600_000;
const BYTES_PER_CHAR = 3;

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The batch operations over one KV handle. */
export function batchMethods(p: BatchParts): StateBatches {
  const { kv, retryLocked } = p;
  /** Versionstamps of the leases this handle wrote last, by lease key. */
  const stamps = new Map<string, { lease: CellLease; versionstamp: string }>();
  const leaseKey = (id: string, cell: string): Deno.KvKey => ["lease", id, cell];
  const stampKey = (id: string, cell: string) => JSON.stringify([id, cell]);
  const blobKey = (id: string): Deno.KvKey => ["blob", id];

  async function getMany<T>(keys: Deno.KvKey[]): Promise<Deno.KvEntryMaybe<T>[]> {
    const out: Deno.KvEntryMaybe<T>[] = [];
    for (const part of chunks(keys, READ_KEYS)) {
      out.push(...await retryLocked(() => kv.getMany<T[]>(part)));
    }
    return out;
  }

  /** The leases of `cells` that `owner` holds, with versionstamps: remembered, else read. */
  async function ownLeases(
    id: string,
    cells: string[],
    owner: string,
  ): Promise<({ lease: CellLease; versionstamp: string } | null)[]> {
    const known = cells.map((c) => {
      const s = stamps.get(stampKey(id, c));
      return s && s.lease.owner === owner ? s : undefined;
    });
    const unknown = cells.filter((_, i) => known[i] === undefined);
    const read = unknown.length === 0
      ? []
      : await getMany<CellLease>(unknown.map((c) => leaseKey(id, c)));
    let r = 0;
    return known.map((k) => {
      if (k) return k;
      const e = read[r++];
      return e.value?.owner === owner ? { lease: e.value, versionstamp: e.versionstamp! } : null;
    });
  }

  async function takeChunk(
    id: string,
    cells: string[],
    holder: { pid: number; host: string; owner: string },
    ms: number,
    at: number | undefined,
  ): Promise<LeaseTake[]> {
    for (let round = 0; round < 3; round++) {
      const entries = await getMany<CellLease>(cells.map((c) => leaseKey(id, c)));
      const now = at ?? Date.now();
      const lease: CellLease = { ...holder, until: now + ms };
      const op = kv.atomic();
      const takes: LeaseTake[] = entries.map((entry, i) => {
        const held = entry.value;
        if (held && held.owner !== holder.owner && held.until > now) {
          return { ok: false, holder: held };
        }
        op.check(entry).set(leaseKey(id, cells[i]), lease, { expireIn: ms });
        return { ok: true, lease };
      });
      if (!takes.some((t) => t.ok)) return takes;
      const res = await retryLocked(() => op.commit());
      if (res.ok) {
        takes.forEach((t, i) => {
          if (t.ok) stamps.set(stampKey(id, cells[i]), { lease, versionstamp: res.versionstamp });
        });
        return takes;
      }
      // Another process changed one of the leases between the read and the commit: look again.
    }
    // Contended: one cell at a time, each with its own retry.
    const takes: LeaseTake[] = [];
    for (const c of cells) {
      stamps.delete(stampKey(id, c));
      takes.push(await p.one.takeLease(id, c, holder, ms, at));
    }
    return takes;
  }

  async function renewChunk(
    id: string,
    cells: string[],
    owner: string,
    ms: number,
    at: number | undefined,
    retried = false,
  ): Promise<boolean[]> {
    const held = await ownLeases(id, cells, owner);
    const now = at ?? Date.now();
    const op = kv.atomic();
    const renewed = held.map((h, i) => {
      if (!h) return null;
      const lease = { ...h.lease, until: now + ms };
      op.check({ key: leaseKey(id, cells[i]), versionstamp: h.versionstamp })
        .set(leaseKey(id, cells[i]), lease, { expireIn: ms });
      return lease;
    });
    if (renewed.every((l) => l === null)) return cells.map(() => false);
    const res = await retryLocked(() => op.commit());
    if (res.ok) {
      return renewed.map((lease, i) => {
        if (lease) stamps.set(stampKey(id, cells[i]), { lease, versionstamp: res.versionstamp });
        return lease !== null;
      });
    }
    // A lease changed under a remembered versionstamp (released by its record's commit while
    // this renewal was on its way, or taken over after it ran out): read them all again.
    for (const c of cells) stamps.delete(stampKey(id, c));
    if (!retried) return await renewChunk(id, cells, owner, ms, at, true);
    const out: boolean[] = [];
    for (const c of cells) out.push(await p.one.renewLease(id, c, owner, ms, at));
    return out;
  }

  async function releaseChunk(
    id: string,
    cells: string[],
    owner: string,
    retried = false,
  ): Promise<void> {
    const held = await ownLeases(id, cells, owner);
    const op = kv.atomic();
    let any = false;
    held.forEach((h, i) => {
      if (!h) return;
      any = true;
      op.check({ key: leaseKey(id, cells[i]), versionstamp: h.versionstamp })
        .delete(leaseKey(id, cells[i]));
    });
    for (const c of cells) stamps.delete(stampKey(id, c));
    if (!any) return;
    const res = await retryLocked(() => op.commit());
    if (res.ok) return;
    if (!retried) return await releaseChunk(id, cells, owner, true);
    for (const c of cells) await p.one.releaseLease(id, c, owner);
  }

  async function releaseLeases(id: string, cells: string[], owner: string): Promise<void> {
    for (const part of chunks(cells, LEASES_PER_COMMIT)) await releaseChunk(id, part, owner);
  }

  /** One group of records in one commit, with `owner`'s leases of their cells released. */
  async function putGroup(
    group: { record: AttemptRecord; blobs?: ReadonlyMap<string, Uint8Array>; stored: unknown }[],
    owner: string | undefined,
    retried = false,
  ): Promise<boolean[]> {
    const cells = group.map(({ record: r }) => cellKey(r.candidate, r.caseId, r.repetition));
    const held = owner === undefined
      ? []
      : await ownLeases(group[0].record.experimentId, cells, owner);
    const op = kv.atomic();
    const rooms = new Set<string>();
    for (const [i, { record, blobs, stored }] of group.entries()) {
      const id = record.experimentId;
      for (const [blob, bytes] of blobs ?? []) op.set(blobKey(blob), bytes);
      const tryKey = ["try", id, cells[i], record.tryNo];
      // As putAttempt: a try number is claimed once.
      op.check({ key: tryKey, versionstamp: null }).set(["cell", id, cells[i]], stored)
        .set(tryKey, stored);
      const h = held[i];
      if (h) {
        op.check({ key: leaseKey(id, cells[i]), versionstamp: h.versionstamp })
          .delete(leaseKey(id, cells[i]));
      }
      const room = await p.experimentRoom(id);
      if (room !== null) rooms.add(room);
    }
    // The rooms' versions move with the records, in the same commit.
    for (const room of rooms) op.set(["room-version", room], Date.now());
    let ok: boolean;
    try {
      ok = (await retryLocked(() => op.commit())).ok;
    } catch (e) {
      // Over a limit of KV's after all (a record's size was underestimated): halve the group.
      if (group.length === 1 || !(e instanceof TypeError)) throw e;
      const half = Math.ceil(group.length / 2);
      return [
        ...await putGroup(group.slice(0, half), owner, retried),
        ...await putGroup(group.slice(half), owner, retried),
      ];
    }
    if (ok) {
      for (const [i, { record }] of group.entries()) {
        stamps.delete(stampKey(record.experimentId, cells[i]));
      }
      return group.map(() => true);
    }
    for (const [i, { record }] of group.entries()) {
      stamps.delete(stampKey(record.experimentId, cells[i]));
    }
    if (!retried) {
      // Another process recorded some of these tries first, or a lease changed under its
      // remembered versionstamp: those tries are not written, the others go again together
      // (their leases read afresh).
      const id = group[0].record.experimentId;
      const tries = await getMany<unknown>(
        group.map(({ record }, i) => ["try", id, cells[i], record.tryNo]),
      );
      const first = tries.map((t) => t.versionstamp !== null);
      const rest = group.filter((_, i) => !first[i]);
      const written = rest.length > 0 ? await putGroup(rest, owner, true) : [];
      if (owner !== undefined) {
        await releaseLeases(id, cells.filter((_, i) => first[i]), owner);
      }
      let r = 0;
      return first.map((taken) => !taken && written[r++]);
    }
    // Again refused (more records of others on the way): each record alone, so the others
    // are kept and only those say false.
    const out: boolean[] = [];
    for (const [i, { record, blobs }] of group.entries()) {
      // Its blobs first (content-addressed: one left behind by a record not written is inert).
      if (blobs && blobs.size > 0) {
        const op = kv.atomic();
        for (const [blob, bytes] of blobs) op.set(blobKey(blob), bytes);
        await retryLocked(() => op.commit());
      }
      out.push(await p.one.putAttempt(record));
      stamps.delete(stampKey(record.experimentId, cells[i]));
      if (owner !== undefined) await p.one.releaseLease(record.experimentId, cells[i], owner);
    }
    return out;
  }

  return {
    blobs: {
      put: (content) => p.files.put(content),
      async get(id) {
        const entry = await retryLocked(() => kv.get<Uint8Array>(blobKey(id)));
        return entry.value ?? await p.files.get(id);
      },
      async has(id) {
        const entry = await retryLocked(() => kv.get<Uint8Array>(blobKey(id)));
        return entry.versionstamp !== null || await p.files.has(id);
      },
    },
    async putAttempts(commits, owner) {
      const encoded = [];
      for (const c of commits) encoded.push({ ...c, ...await p.encodeSized(c.record) });
      const out: boolean[] = [];
      let group: typeof encoded = [];
      let bytes = 0;
      const flush = async () => {
        if (group.length > 0) out.push(...await putGroup(group, owner));
        group = [];
        bytes = 0;
      };
      for (const e of encoded) {
        let size = 2 * BYTES_PER_CHAR * e.chars + 200;
        for (const bytes of e.blobs?.values() ?? []) size += bytes.length + 200;
        const sameExperiment = group.length === 0 ||
          group[0].record.experimentId === e.record.experimentId;
        if (
          group.length >= RECORDS_PER_COMMIT || bytes + size > COMMIT_BYTES || !sameExperiment
        ) await flush();
        group.push(e);
        bytes += size;
      }
      await flush();
      return out;
    },
    async takeLeases(id, cells, holder, ms, at) {
      const out: LeaseTake[] = [];
      for (const part of chunks(cells, LEASES_PER_COMMIT)) {
        out.push(...await takeChunk(id, part, holder, ms, at));
      }
      return out;
    },
    async renewLeases(id, cells, owner, ms, at) {
      const out: boolean[] = [];
      for (const part of chunks(cells, LEASES_PER_COMMIT)) {
        out.push(...await renewChunk(id, part, owner, ms, at));
      }
      return out;
    },
    releaseLeases,
    async cellRecordsOf(id, cells) {
      const entries = await getMany<unknown>(cells.map((c) => ["cell", id, c]));
      const out: (AttemptRecord | null)[] = [];
      for (const e of entries) out.push(await p.decode<AttemptRecord>(e.value));
      return out;
    },
  };
}

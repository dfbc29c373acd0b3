/**
 * Many finished attempts committed at once: a group of records is one atomic commit
 * (every record or none), with the writer's leases of their cells released in it; when it
 * fails because another process recorded one of its tries first, the others go again and,
 * refused once more, each record is committed alone, so the others are kept and only that
 * one reports false.
 */
import { type AttemptRecord, cellKey } from "../../../core/bench/records.ts";
import { type Batcher, blobKey, getMany, leaseKey, type Stamped, stampKey } from "./batch_state.ts";
import { ownLeases, releaseLeases } from "./batch_leases.ts";

/** Records per commit (two checks each: the try number and the lease released with it). */
const RECORDS_PER_COMMIT = 40;
/**
 * Bytes of mutations per commit, under KV's 819,200. A record is stored twice (the cell's
 * latest and its try); V8 may spend up to ~3 bytes per JSON character (a double for "0.5").
 */
const COMMIT_BYTES = 600_000;
const BYTES_PER_CHAR = 3;

/** A record to commit, with its blobs and its stored form. */
interface Encoded {
  record: AttemptRecord;
  blobs?: ReadonlyMap<string, Uint8Array>;
  stored: unknown;
  chars: number;
}

/** putAttempts() of the port: the records in groups that fit KV's limits, in order. */
export async function putAttempts(
  b: Batcher,
  commits: { record: AttemptRecord; blobs?: ReadonlyMap<string, Uint8Array> }[],
  owner: string | undefined,
): Promise<boolean[]> {
  const encoded: Encoded[] = [];
  for (const c of commits) encoded.push({ ...c, ...await b.p.encodeSized(c.record) });
  const out: boolean[] = [];
  let group: Encoded[] = [];
  let bytes = 0;
  const flush = async () => {
    if (group.length > 0) out.push(...await putGroup(b, group, owner));
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
}

/** One group of records in one commit, with `owner`'s leases of their cells released. */
async function putGroup(
  b: Batcher,
  group: Encoded[],
  owner: string | undefined,
  retried = false,
): Promise<boolean[]> {
  const cells = group.map(({ record: r }) => cellKey(r.candidate, r.caseId, r.repetition));
  const held = owner === undefined
    ? []
    : await ownLeases(b, group[0].record.experimentId, cells, owner);
  let ok: boolean;
  try {
    ok = await commitGroup(b, group, cells, held);
  } catch (e) {
    // Over a limit of KV's after all (a record's size was underestimated): halve the group.
    if (group.length === 1 || !(e instanceof TypeError)) throw e;
    const half = Math.ceil(group.length / 2);
    return [
      ...await putGroup(b, group.slice(0, half), owner, retried),
      ...await putGroup(b, group.slice(half), owner, retried),
    ];
  }
  for (const [i, { record }] of group.entries()) {
    b.stamps.delete(stampKey(record.experimentId, cells[i]));
  }
  if (ok) return group.map(() => true);
  if (!retried) return await putUntaken(b, group, cells, owner);
  return await putEachAlone(b, group, cells, owner);
}

/** The group's records, their blobs and lease releases, and their rooms' versions: one commit. */
async function commitGroup(
  b: Batcher,
  group: Encoded[],
  cells: string[],
  held: (Stamped | null)[],
): Promise<boolean> {
  const op = b.p.kv.atomic();
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
    const room = await b.p.experimentRoom(id);
    if (room !== null) rooms.add(room);
  }
  // The rooms' versions move with the records, in the same commit.
  for (const room of rooms) op.set(["room-version", room], Date.now());
  return (await b.p.retryLocked(() => op.commit())).ok;
}

/**
 * After a refused commit: another process recorded some of these tries first, or a lease
 * changed under its remembered versionstamp. Those tries are not written, the others go
 * again together (their leases read afresh).
 */
async function putUntaken(
  b: Batcher,
  group: Encoded[],
  cells: string[],
  owner: string | undefined,
): Promise<boolean[]> {
  const id = group[0].record.experimentId;
  const tries = await getMany<unknown>(
    b,
    group.map(({ record }, i) => ["try", id, cells[i], record.tryNo]),
  );
  const first = tries.map((t) => t.versionstamp !== null);
  const rest = group.filter((_, i) => !first[i]);
  const written = rest.length > 0 ? await putGroup(b, rest, owner, true) : [];
  if (owner !== undefined) {
    await releaseLeases(b, id, cells.filter((_, i) => first[i]), owner);
  }
  let r = 0;
  return first.map((taken) => !taken && written[r++]);
}

/**
 * Again refused (more records of others on the way): each record alone, so the others are
 * kept and only those say false.
 */
async function putEachAlone(
  b: Batcher,
  group: Encoded[],
  cells: string[],
  owner: string | undefined,
): Promise<boolean[]> {
  const out: boolean[] = [];
  for (const [i, { record, blobs }] of group.entries()) {
    // Its blobs first (content-addressed: one left behind by a record not written is inert).
    if (blobs && blobs.size > 0) {
      const op = b.p.kv.atomic();
      for (const [blob, bytes] of blobs) op.set(blobKey(blob), bytes);
      await b.p.retryLocked(() => op.commit());
    }
    out.push(await b.p.one.putAttempt(record));
    b.stamps.delete(stampKey(record.experimentId, cells[i]));
    if (owner !== undefined) await b.p.one.releaseLease(record.experimentId, cells[i], owner);
  }
  return out;
}

/**
 * Attempt records in the PostgreSQL store: every try of every cell is a row, a cell's latest
 * record its highest try. A group of finished attempts is one transaction: their small blobs
 * (unless the blobs are in an object store: then they are stored there first, and the
 * transaction begins only once every one is), their records (a try already claimed by another process is not written, the others are),
 * and the release of the committer's leases on their cells. A record is accepted only from
 * the holder of its cell's lease: once another owner has taken the cell's lease over (which
 * it can only once the committer's expired), the committer's record is refused, so a worker
 * that lost its lease commits nothing for that cell and the new holder's record stands.
 */
import { type AttemptRecord, cellKey } from "../../../core/bench/records.ts";
import type { AttemptCommit } from "../../../core/ports/state_store.ts";
import type { BlobStore } from "../../../core/ports/blob_store.ts";
import type { Sql } from "./connect.ts";

/** Records per page of a stream. */
export const STREAM_PAGE = 500;

/** Blobs stored at once in an object store before a commit. */
const BLOB_PUTS = 8;

/** Stores `bytes` in `blobs`, a few at a time; resolves once every one is stored. */
async function putAll(blobs: BlobStore, bytes: Uint8Array[]): Promise<void> {
  let next = 0;
  const one = async () => {
    while (next < bytes.length) await blobs.put(bytes[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(BLOB_PUTS, bytes.length) }, one));
}

/**
 * Commits `commits` (see StateBatches.putAttempts); `touch` is told the experiments whose
 * records changed, inside the same transaction. With `objectStore` the commits' blobs go
 * there, all of them stored before the records' transaction begins: a record never names a
 * blob that is not stored, and a crash between the two leaves only unnamed blobs, which
 * nothing reads and a rerun puts again under the same ids.
 */
export async function putAttempts(
  sql: Sql,
  commits: AttemptCommit[],
  leaseOwner: string | undefined,
  touch: (tx: Sql, experiments: string[]) => Promise<void>,
  objectStore: BlobStore | null = null,
): Promise<boolean[]> {
  if (commits.length === 0) return [];
  const experiments = commits.map((c) => c.record.experimentId);
  const cells = commits.map((c) =>
    cellKey(c.record.candidate, c.record.caseId, c.record.repetition)
  );
  const tries = commits.map((c) => c.record.tryNo);
  const texts = commits.map((c) => JSON.stringify(c.record));
  const blobIds: string[] = [];
  const blobBytes: Uint8Array[] = [];
  for (const c of commits) {
    for (const [id, bytes] of c.blobs ?? []) {
      blobIds.push(id);
      blobBytes.push(bytes);
    }
  }
  if (objectStore !== null) {
    await putAll(objectStore, blobBytes);
    blobIds.length = 0;
  }
  return await sql.begin(async (tx) => {
    for (let i = 0; i < blobIds.length; i++) {
      await tx`insert into dvergr_blobs (id, bytes) values (${blobIds[i]}, ${blobBytes[i]})
        on conflict (id) do nothing`;
    }
    const owner = leaseOwner ?? null;
    const written = await tx`
      insert into dvergr_records (experiment, cell, try, record, owner)
      select t.e, t.c, t.n, t.r, ${owner}::text
        from unnest(${experiments}::text[], ${cells}::text[], ${tries}::int[], ${texts}::text[])
          as t(e, c, n, r)
       where ${owner}::text is null or not exists (
         select 1 from dvergr_leases l
          where l.experiment = t.e and l.cell = t.c and l.owner <> ${owner}::text)
      on conflict (experiment, cell, try) do nothing
      returning experiment, cell, try`;
    if (leaseOwner !== undefined) {
      await tx`delete from dvergr_leases l
        using unnest(${experiments}::text[], ${cells}::text[]) as t(e, c)
        where l.experiment = t.e and l.cell = t.c and l.owner = ${leaseOwner}`;
    }
    const ok = new Set(written.map((r) => `${r.experiment}\n${r.cell}\n${r.try}`));
    const changed = [...new Set(written.map((r) => String(r.experiment)))];
    if (changed.length > 0) await touch(tx as unknown as Sql, changed);
    return commits.map((_, i) => ok.has(`${experiments[i]}\n${cells[i]}\n${tries[i]}`));
  }) as boolean[];
}

const parse = (rows: { record: string }[]): AttemptRecord[] =>
  rows.map((r) => JSON.parse(r.record) as AttemptRecord);

/** The latest record of one cell, or null. */
export async function cellRecord(
  sql: Sql,
  experiment: string,
  cell: string,
): Promise<AttemptRecord | null> {
  const rows = await sql<{ record: string }[]>`select record from dvergr_records
    where experiment = ${experiment} and cell = ${cell} order by try desc limit 1`;
  return rows.length === 0 ? null : parse(rows)[0];
}

/** The latest records of `cells` (null for a cell without one), in their order. */
export async function cellRecordsOf(
  sql: Sql,
  experiment: string,
  cells: string[],
): Promise<(AttemptRecord | null)[]> {
  if (cells.length === 0) return [];
  const rows = await sql<{ cell: string; record: string }[]>`
    select distinct on (cell) cell, record from dvergr_records
     where experiment = ${experiment} and cell = any(${cells}::text[])
     order by cell, try desc`;
  const byCell = new Map(rows.map((r) => [r.cell, JSON.parse(r.record) as AttemptRecord]));
  return cells.map((c) => byCell.get(c) ?? null);
}

/** The latest record of every cell with one, in key order, a page at a time. */
export async function* streamCellRecords(
  sql: Sql,
  experiment: string,
  page = STREAM_PAGE,
): AsyncGenerator<AttemptRecord> {
  let after: string | null = null;
  for (;;) {
    const rows: { cell: string; record: string }[] = await sql`
      select distinct on (cell) cell, record from dvergr_records
       where experiment = ${experiment} and (${after}::text is null or cell > ${after}::text)
       order by cell, try desc limit ${page}`;
    for (const r of rows) yield JSON.parse(r.record) as AttemptRecord;
    if (rows.length < page) return;
    after = rows[rows.length - 1].cell;
  }
}

/** Every try of every cell, in key order (a cell's tries in order), a page at a time. */
export async function* streamAttemptHistory(
  sql: Sql,
  experiment: string,
  page = STREAM_PAGE,
): AsyncGenerator<AttemptRecord> {
  let after: { cell: string; try: number } | null = null;
  for (;;) {
    const cell: string | null = after?.cell ?? null;
    const tryNo: number = after?.try ?? 0;
    const rows: { cell: string; try: number; record: string }[] = await sql`
      select cell, try, record from dvergr_records
       where experiment = ${experiment}
         and (${cell}::text is null or (cell, try) > (${cell}::text, ${tryNo}::int))
       order by cell, try limit ${page}`;
    for (const r of rows) yield JSON.parse(r.record) as AttemptRecord;
    if (rows.length < page) return;
    const last = rows[rows.length - 1];
    after = { cell: last.cell, try: Number(last.try) };
  }
}

/** Everything a stream gives, held (small experiments, tests). */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

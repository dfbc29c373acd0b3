/**
 * Cell leases in the PostgreSQL store: taken by one statement that claims the cells whose
 * lease is the same owner's or has run out `FOR UPDATE SKIP LOCKED` and inserts the first
 * lease of the others (so of two workers asking at once, one gets it and the other learns
 * the holder, without waiting on its locks), renewed and released only by their owner. Many cells go in
 * one statement. Times are ms since the epoch; callers give and get them on their own clock,
 * as in every store, and they are kept on the server's (server_clock.ts): workers whose clocks
 * disagree agree on when a lease runs out.
 */
import type { CellLease, LeaseTake } from "../../../core/ports/cell_lease.ts";
import type { Sql } from "./connect.ts";
import type { ServerClock } from "./server_clock.ts";

type Holder = { pid: number; host: string; owner: string };

/** A lease row, its time on the caller's clock (`offset`: the server's less the caller's). */
function leaseOfRow(r: Record<string, unknown>, offset: number): CellLease {
  return {
    pid: Number(r.pid),
    host: String(r.host),
    owner: String(r.owner),
    until: Number(r.until_ms) - offset,
  };
}

/** takeLease for many cells: what each got, in their order. */
export async function takeLeases(
  sql: Sql,
  clock: ServerClock,
  experiment: string,
  cells: string[],
  holder: Holder,
  ms: number,
  callerNow = Date.now(),
): Promise<LeaseTake[]> {
  if (cells.length === 0) return [];
  const offset = await clock.offset();
  const now = callerNow + offset;
  const until = now + ms;
  // A cell is claimed FOR UPDATE SKIP LOCKED: a lease row another worker is claiming or
  // renewing at this moment is passed over (refused this time), never waited for; a free
  // cell's first lease is an insert, of which one of two at once wins.
  const taken = await sql`
    with mine as (
      select l.cell from dvergr_leases l
       where l.experiment = ${experiment} and l.cell = any(${cells}::text[])
         and (l.owner = ${holder.owner} or l.until_ms <= ${now})
       for update skip locked),
    renewed as (
      update dvergr_leases l
         set owner = ${holder.owner}, pid = ${holder.pid}, host = ${holder.host},
             until_ms = ${until}
        from mine m
       where l.experiment = ${experiment} and l.cell = m.cell
      returning l.cell),
    fresh as (
      insert into dvergr_leases (experiment, cell, owner, pid, host, until_ms)
      select ${experiment}, c, ${holder.owner}, ${holder.pid}, ${holder.host}, ${until}
        from unnest(${cells}::text[]) as c
       where not exists (
         select 1 from dvergr_leases l where l.experiment = ${experiment} and l.cell = c)
      on conflict (experiment, cell) do nothing
      returning cell)
    select cell from renewed union all select cell from fresh`;
  const got = new Set(taken.map((r) => String(r.cell)));
  const refused = cells.filter((c) => !got.has(c));
  const holders = new Map<string, CellLease>();
  if (refused.length > 0) {
    const rows = await sql`select cell, owner, pid, host, until_ms from dvergr_leases
      where experiment = ${experiment} and cell = any(${refused}::text[])`;
    for (const r of rows) holders.set(String(r.cell), leaseOfRow(r, offset));
  }
  const lease: CellLease = { ...holder, until: until - offset };
  return cells.map((c): LeaseTake => {
    if (got.has(c)) return { ok: true, lease };
    // Released between our two statements: it is free, but not ours; the caller asks again.
    return { ok: false, holder: holders.get(c) ?? { ...holder, owner: "", until: callerNow } };
  });
}

/** renewLease for many cells: whether each is still the owner's, in their order. */
export async function renewLeases(
  sql: Sql,
  clock: ServerClock,
  experiment: string,
  cells: string[],
  owner: string,
  ms: number,
  callerNow = Date.now(),
): Promise<boolean[]> {
  if (cells.length === 0) return [];
  const now = callerNow + await clock.offset();
  const rows = await sql`update dvergr_leases set until_ms = ${now + ms}
    where experiment = ${experiment} and cell = any(${cells}::text[]) and owner = ${owner}
    returning cell`;
  const kept = new Set(rows.map((r) => String(r.cell)));
  return cells.map((c) => kept.has(c));
}

/** Removes `owner`'s leases on `cells` (another owner's stay); the cells it removed. */
export async function releaseLeases(
  sql: Sql,
  experiment: string,
  cells: string[],
  owner: string,
): Promise<Set<string>> {
  if (cells.length === 0) return new Set();
  const rows = await sql`delete from dvergr_leases
    where experiment = ${experiment} and cell = any(${cells}::text[]) and owner = ${owner}
    returning cell`;
  return new Set(rows.map((r) => String(r.cell)));
}

/** One cell's lease, or null. */
export async function leaseOf(
  sql: Sql,
  clock: ServerClock,
  experiment: string,
  cell: string,
): Promise<CellLease | null> {
  const rows = await sql`select owner, pid, host, until_ms from dvergr_leases
    where experiment = ${experiment} and cell = ${cell}`;
  return rows.length === 0 ? null : leaseOfRow(rows[0], await clock.offset());
}

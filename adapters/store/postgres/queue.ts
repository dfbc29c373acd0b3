/**
 * The PostgreSQL store's queue of experiments open to workers, and the workers themselves.
 * `dvergr benchmark … --store URL --enqueue` plans an experiment and puts what a worker needs
 * to run it here (the bundle's files by content id in the store's blobs, the candidate specs
 * and the plan's options: never a key); `dvergr worker` takes open experiments from here,
 * registers itself and says it is alive, and closes an experiment once every cell has its
 * record. Permissions: --allow-net to the server.
 */
import { type Sql, storeUnavailable } from "./connect.ts";

import type {
  ExperimentQueue,
  QueuedExperiment,
  QueuedRequest,
  WorkerInfo,
  WorkerProgress,
} from "../../../core/ports/experiment_queue.ts";

/** Opens `experiment` to workers (again, if it was closed), with what they need to run it. */
export async function enqueueExperiment(
  sql: Sql,
  experiment: string,
  request: QueuedRequest,
): Promise<void> {
  await sql`insert into dvergr_queue (experiment, request, state)
    values (${experiment}, ${JSON.stringify(request)}, 'open')
    on conflict (experiment) do update set request = excluded.request, state = 'open'`;
}

/** The open experiments, oldest first (only `experiment` when given). */
export async function openExperiments(sql: Sql, experiment?: string): Promise<QueuedExperiment[]> {
  const rows = experiment === undefined
    ? await sql`select experiment, request, enqueued_at from dvergr_queue
        where state = 'open' order by enqueued_at, experiment`
    : await sql`select experiment, request, enqueued_at from dvergr_queue
        where state = 'open' and experiment = ${experiment}`;
  return rows.map((r) => ({
    experiment: String(r.experiment),
    request: JSON.parse(String(r.request)),
    enqueuedAt: new Date(r.enqueued_at as string).toISOString(),
  }));
}

/** Whether `experiment` was ever enqueued, and its state. */
export async function queueState(sql: Sql, experiment: string): Promise<string | null> {
  const rows = await sql`select state from dvergr_queue where experiment = ${experiment}`;
  return rows.length === 0 ? null : String(rows[0].state);
}

/** No worker takes `experiment` any more (every cell has its record). */
export async function closeExperiment(sql: Sql, experiment: string): Promise<void> {
  await sql`update dvergr_queue set state = 'closed' where experiment = ${experiment}`;
}

/** Registers a worker (or says it is alive again); `state` running or stopped. */
export async function markWorker(sql: Sql, w: WorkerInfo, state = "running"): Promise<void> {
  await sql`insert into dvergr_workers (id, host, pid, state) values (${w.id}, ${w.host}, ${w.pid}, ${state})
    on conflict (id) do update set seen_at = now(), state = excluded.state`;
}

/** Progress of `experiment` by the run that committed each record (and leases held now). */
export async function progressByWorker(sql: Sql, experiment: string): Promise<WorkerProgress[]> {
  const rows = await sql`
    with done as (
      select owner, count(*)::int as n from dvergr_records
       where experiment = ${experiment} and owner is not null group by owner),
    flying as (
      select owner, count(*)::int as n from dvergr_leases
       where experiment = ${experiment} group by owner),
    owners as (select owner from done union select owner from flying)
    select o.owner, w.host, w.pid, w.state,
           extract(epoch from now() - w.seen_at)::float8 as ago,
           coalesce(d.n, 0) as records, coalesce(f.n, 0) as in_flight
      from owners o
      left join done d on d.owner = o.owner
      left join flying f on f.owner = o.owner
      left join dvergr_workers w on w.id = o.owner
     order by o.owner`;
  return rows.map((r) => ({
    owner: String(r.owner),
    host: r.host === null ? null : String(r.host),
    pid: r.pid === null ? null : Number(r.pid),
    state: r.state === null ? null : String(r.state),
    seenSecondsAgo: r.ago === null ? null : Math.round(Number(r.ago)),
    records: Number(r.records),
    inFlight: Number(r.in_flight),
  }));
}

/** The queue port on the store's tables. */
export function postgresQueue(sql: Sql): ExperimentQueue {
  return {
    enqueue: (experiment, request) => enqueueExperiment(sql, experiment, request),
    open: (experiment) => openExperiments(sql, experiment),
    state: (experiment) => queueState(sql, experiment),
    close: (experiment) => closeExperiment(sql, experiment),
    markWorker: (worker, state) => markWorker(sql, worker, state),
    progress: (experiment) => progressByWorker(sql, experiment),
    unavailable: storeUnavailable,
  };
}

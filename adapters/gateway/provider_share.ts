/**
 * One attempt's share of the model providers, and who is to blame when a provider refuses
 * the attempt's requests as too many (429) or is overloaded (529, 503, other 5xx).
 *
 * A fault (an attempt without a verdict, run again in the run and on every rerun) may only be
 * what the candidate cannot cause; otherwise a candidate that fails could turn its failure into
 * a retry by bursting requests until the provider refuses them. So:
 *
 * - **Bounded in flight.** The gateway forwards at most MAX_IN_FLIGHT requests of an attempt
 *   at once; the others wait in order (queued, not refused) while the candidate's time runs.
 * - **The gateway retries once.** A request of an attempt within its fair share that the
 *   provider refuses with 408, 429 or 5xx (or cannot be reached) is sent again by the gateway
 *   (GATEWAY_TRIES tries), after the provider's `retry-after-ms` / `retry-after` (at most
 *   MAX_RETRY_WAIT_MS) or else 1 s; the wait ends with the attempt. Once only: agents retry
 *   too (Claude Code, Codex, the SDKs), and retries of both would multiply the waits until an
 *   honest agent under an outage ran out of time (a failure) instead of ending in a fault.
 * - **Who could have caused it.** The attempt's fair share is at most
 *   FAIR_REQUESTS_PER_MINUTE requests and FAIR_BYTES_PER_MINUTE bytes of request bodies sent
 *   by the candidate (queued ones too) in the last minute. A provider failure that outlasts
 *   the gateway's retries is a fault only when the attempt is within its share as the failure
 *   comes back: then the provider limits the host for reasons beyond the attempt (other
 *   attempts, other users of the key, an outage), which an honest agent meets too. Over its
 *   share, the gateway retries nothing and the failure is the candidate's own: the attempt
 *   fails with that cause, never a fault. So a burst cannot produce a fault; within the
 *   share a refusal stays a fault, and a host whose provider allows fewer requests than its
 *   parallel attempts' shares together should lower `--parallel`.
 *
 * The share is generous for an agent (one request a second on average, 8 MiB of bodies a
 * minute: a 100,000-token conversation sent ten times a minute) and far below a burst.
 *
 * Permissions: none.
 */

/** Requests of one attempt forwarded at once; more wait their turn. */
export const MAX_IN_FLIGHT = 4;
/** Requests forwarded in a minute within an attempt's fair share. */
export const FAIR_REQUESTS_PER_MINUTE = 60;
/** Bytes of request bodies forwarded in a minute within an attempt's fair share. */
export const FAIR_BYTES_PER_MINUTE = 8 * 1024 * 1024;
/** Tries of one request the gateway makes for an attempt within its share. */
export const GATEWAY_TRIES = 2;
/** The longest the gateway waits between two tries, whatever the provider asks. */
export const MAX_RETRY_WAIT_MS = 10_000;

const MINUTE_MS = 60_000;

/** A status the provider may answer otherwise a moment later. */
export function isRetryable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** The attempt's load in the minute up to a request, and whether it was within the share. */
export interface Load {
  requests: number;
  bytes: number;
  within: boolean;
}

/** One attempt's requests in flight, their queue, and what it sent in the last minute. */
export class ProviderShare {
  private inFlight = 0;
  private readonly queue: (() => void)[] = [];
  /** The candidate's requests of the last minute (a few seconds more, until looked at). */
  private readonly sent: { at: number; bytes: number }[] = [];

  constructor(private readonly now: () => number) {}

  /**
   * Waits for a slot in flight, in order of asking; false when `signal` ended the wait
   * (then no slot is held). Give a held slot back with `release`.
   */
  async slot(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return false;
    if (this.inFlight < MAX_IN_FLIGHT && this.queue.length === 0) {
      this.inFlight++;
      return true;
    }
    let turn!: () => void;
    const granted = new Promise<void>((r) => turn = r);
    this.queue.push(turn);
    let aborted!: () => void;
    const gaveUp = new Promise<void>((r) => aborted = r);
    signal.addEventListener("abort", aborted, { once: true });
    const won = await Promise.race([granted.then(() => true), gaveUp.then(() => false)]);
    signal.removeEventListener("abort", aborted);
    if (won) return true;
    const i = this.queue.indexOf(turn);
    if (i >= 0) this.queue.splice(i, 1);
    else this.release(); // granted as it gave up: pass the slot on
    return false;
  }

  /** Gives a slot back: the next in the queue takes it. */
  release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.inFlight = Math.max(0, this.inFlight - 1);
  }

  /** Counts a request the candidate sent now (queued or not); the attempt's load with it. */
  record(bytes: number): Load {
    this.sent.push({ at: this.now(), bytes });
    return this.load();
  }

  /** The attempt's load: its requests in the last minute. */
  load(): Load {
    const now = this.now();
    while (this.sent.length > 0 && this.sent[0].at <= now - MINUTE_MS) this.sent.shift();
    const total = this.sent.reduce((sum, s) => sum + s.bytes, 0);
    return {
      requests: this.sent.length,
      bytes: total,
      within: this.sent.length <= FAIR_REQUESTS_PER_MINUTE && total <= FAIR_BYTES_PER_MINUTE,
    };
  }
}

/**
 * Milliseconds to wait before try `tries + 1` of a request the provider answered `res` to:
 * its `retry-after-ms`, else its `retry-after` (seconds or a date), else 1 s (then 2, 4…); at most
 * MAX_RETRY_WAIT_MS.
 */
export function retryWaitMs(res: Response | null, tries: number, nowMs = Date.now()): number {
  const backoff = 1000 * 2 ** Math.max(0, tries - 1);
  const ms = Number(res?.headers.get("retry-after-ms") ?? NaN);
  const after = res?.headers.get("retry-after") ?? null;
  let wait = backoff;
  if (Number.isFinite(ms) && ms >= 0) wait = ms;
  else if (after !== null && /^\s*\d+(\.\d+)?\s*$/.test(after)) wait = Number(after) * 1000;
  else if (after !== null && Number.isFinite(Date.parse(after))) {
    wait = Math.max(0, Date.parse(after) - nowMs);
  }
  return Math.min(wait, MAX_RETRY_WAIT_MS);
}

/** Sleeps `ms`; false when `signal` ended it first. */
export function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (slept: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(slept);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Watches rooms for durable changes made by any process on the home: a commit (the room's
 * head moves) or a record of the room (an experiment, an attempt, a scorecard, a job's
 * progress: the state store's room version moves). Deno KV's own watch sees only this
 * process's writes, so the watcher polls these two cheap tokens, at a bounded rate and only
 * while something is watched.
 */
import type { Home } from "../core/ports/home.ts";

/** How often watched rooms are looked at (so notifications come at most ~4 times a second). */
export const WATCH_INTERVAL_MS = 250;

export interface RoomWatcher {
  /**
   * Calls `onChange` after each change of `room` (null: of any room of the home) seen after
   * this call. Returns the function that stops it.
   */
  watch(room: string | null, onChange: () => void): () => void;
  close(): void;
}

/** The version of a room (its head and its records' version), or of the whole home. */
export function homeVersion(home: Home): (room: string | null) => Promise<string> {
  const one = async (room: string) => {
    const head = await home.rooms.head(room).catch(() => "none");
    return `${head}:${await home.state.roomVersion(room)}`;
  };
  return async (room) => {
    if (room !== null) return await one(room);
    const rooms = await home.rooms.listRooms();
    return (await Promise.all(rooms.map(async (r) => `${r}=${await one(r)}`))).join(",");
  };
}

/** A watcher polling `version` every `intervalMs` for the watched rooms. */
export function createRoomWatcher(
  version: (room: string | null) => Promise<string>,
  intervalMs = WATCH_INTERVAL_MS,
): RoomWatcher {
  const key = (room: string | null) => room ?? "*";
  const watched = new Map<
    string,
    { room: string | null; last?: string; listeners: Set<() => void> }
  >();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  async function tick(): Promise<void> {
    timer = undefined;
    for (const w of [...watched.values()]) {
      let v: string;
      try {
        v = await version(w.room);
      } catch {
        continue; // A room being created or removed: look again next time.
      }
      if (w.last !== undefined && v !== w.last) {
        for (const f of [...w.listeners]) {
          try {
            f();
          } catch {
            // A listener's failure is its own.
          }
        }
      }
      w.last = v;
    }
    schedule();
  }

  function schedule(): void {
    if (closed || timer !== undefined || watched.size === 0) return;
    const t = setTimeout(() => void tick(), intervalMs);
    timer = t;
    // The watcher alone does not keep the process alive.
    Deno.unrefTimer(t as unknown as number);
  }

  return {
    watch(room, onChange) {
      const k = key(room);
      let w = watched.get(k);
      if (!w) {
        w = { room, listeners: new Set() };
        watched.set(k, w);
        const entry = w;
        // The version now, so that only later changes count.
        version(room).then((v) => entry.last ??= v, () => {});
      }
      w.listeners.add(onChange);
      schedule();
      return () => {
        const x = watched.get(k);
        if (!x) return;
        x.listeners.delete(onChange);
        if (x.listeners.size === 0) watched.delete(k);
      };
    },
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      watched.clear();
    },
  };
}

/**
 * Calls `f` at most once per `ms`: a call within the window after one is deferred to its
 * end (and calls meanwhile are folded into it). Returns the throttled function and a stop.
 */
export function throttle(f: () => void, ms: number): { call(): void; stop(): void } {
  let last = -Infinity;
  let pending: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const fire = () => {
    pending = undefined;
    if (stopped) return;
    last = performance.now();
    f();
  };
  return {
    call() {
      if (stopped || pending !== undefined) return;
      const wait = last + ms - performance.now();
      if (wait <= 0) fire();
      else pending = setTimeout(fire, wait);
    },
    stop() {
      stopped = true;
      if (pending !== undefined) clearTimeout(pending);
    },
  };
}

/**
 * SIGINT and SIGTERM as an AbortSignal: the one place the CLI listens for them (a benchmark
 * stops its cells and keeps what is recorded; the MCP server stops its jobs and closes).
 */
const STOP_SIGNALS: Deno.Signal[] = ["SIGINT", "SIGTERM"];

export interface StopSignal {
  /** Aborts at the first SIGINT or SIGTERM (or when `also` aborts). */
  signal: AbortSignal;
  /** Resolves when `signal` aborts. */
  done: Promise<void>;
  /** Stops listening. */
  dispose(): void;
}

export function onStopSignal(also?: AbortSignal): StopSignal {
  const controller = new AbortController();
  const fire = () => controller.abort();
  for (const s of STOP_SIGNALS) {
    try {
      Deno.addSignalListener(s, fire);
    } catch {
      // Signals are not available on this platform.
    }
  }
  also?.addEventListener("abort", fire, { once: true });
  const done = new Promise<void>((r) => {
    if (controller.signal.aborted) r();
    else controller.signal.addEventListener("abort", () => r(), { once: true });
  });
  return {
    signal: controller.signal,
    done,
    dispose() {
      for (const s of STOP_SIGNALS) {
        try {
          Deno.removeSignalListener(s, fire);
        } catch {
          // Not available.
        }
      }
      also?.removeEventListener("abort", fire);
    },
  };
}

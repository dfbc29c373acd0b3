/**
 * SIGINT and SIGTERM as an AbortSignal: the one place the CLI listens for them (a benchmark
 * stops its cells and keeps what is recorded; the MCP server stops its jobs and closes).
 */
const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;
const SIGNAL_NUMBERS: Record<typeof STOP_SIGNALS[number], number> = { SIGINT: 2, SIGTERM: 15 };

export interface StopSignal {
  /** Aborts at the first SIGINT or SIGTERM (or when `also` aborts). */
  signal: AbortSignal;
  /**
   * The exit status of a command a signal stopped, as shells report one killed by it:
   * 130 after SIGINT, 143 after SIGTERM; null when no signal came.
   */
  exitStatus(): number | null;
  /** Resolves when `signal` aborts. */
  done: Promise<void>;
  /** Stops listening. */
  dispose(): void;
}

export function onStopSignal(also?: AbortSignal): StopSignal {
  const controller = new AbortController();
  let received: typeof STOP_SIGNALS[number] | null = null;
  const fire = () => controller.abort();
  const listeners = STOP_SIGNALS.map((s) =>
    [s, () => {
      received ??= s;
      fire();
    }] as const
  );
  for (const [s, listener] of listeners) {
    try {
      Deno.addSignalListener(s, listener);
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
    exitStatus: () => received === null ? null : 128 + SIGNAL_NUMBERS[received],
    done,
    dispose() {
      for (const [s, listener] of listeners) {
        try {
          Deno.removeSignalListener(s, listener);
        } catch {
          // Not available.
        }
      }
      also?.removeEventListener("abort", fire);
    },
  };
}

/**
 * The `postgres` driver (3.4.9) buffers a small write and sends it from a setImmediate; when the
 * server closes the connection in between (a restart, a terminated backend), that callback runs
 * after the driver has dropped its socket and throws `TypeError: Cannot read properties of null
 * (reading 'write')` from `nextWrite`, outside any query: an uncaught error that ended a worker
 * mid-run on a loaded machine (porsager/postgres#1154, #1176; denoland/deno#34667). By then the
 * driver has failed the connection's queries (CONNECTION_CLOSED, or the socket's error), so
 * the buffered bytes have nobody waiting on them: that one error is dropped, every other
 * uncaught error still ends the process.
 */

/** Whether an uncaught error is the driver's write to a connection it has already closed. */
export function isClosedSocketWrite(error: unknown): boolean {
  if (!(error instanceof TypeError)) return false;
  if (
    !/null \(reading 'write'\)|null is not an object \(evaluating 'socket\.write'\)/.test(
      error.message,
    )
  ) return false;
  const top = (error.stack ?? "").split("\n").find((l) => /^\s+at /.test(l)) ?? "";
  return /\bnextWrite\b/.test(top) && /[\\/]postgres[\\/]src[\\/]connection\.js:/.test(top);
}

let installed = false;

/** Installs the guard once per process (every connectPostgres() asks). */
export function guardClosedSocketWrites(): void {
  if (installed) return;
  installed = true;
  globalThis.addEventListener("error", (event) => {
    if (isClosedSocketWrite(event.error)) event.preventDefault();
  });
}

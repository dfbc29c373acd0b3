/** Worker side of both sandbox workers (checker.js and Clojure). Needs no permission. */

/** The worker's Deno permission states, reported at start (pool stats show that none is granted). */
export function permissionStates(): Record<string, string> {
  const states: Record<string, string> = {};
  for (const name of ["read", "write", "net", "env", "run", "ffi", "sys", "import"] as const) {
    try {
      states[name] = Deno.permissions.querySync({ name }).state;
    } catch (e) {
      states[name] = `unknown (${e instanceof Error ? e.message : String(e)})`;
    }
  }
  return states;
}

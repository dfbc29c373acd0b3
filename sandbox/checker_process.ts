/**
 * The checker.js worker as a process: `deno run` of this file with every permission denied,
 * messages as JSON lines over stdin/stdout (sandbox/stdio_worker.ts). Being a process, it can
 * always be stopped: the pool kills it when a checker is stuck in a native call that never
 * polls QuickJS's interrupt handler, and the CPU it used is free at once.
 *
 * Permissions: none.
 */
import { createCheckerService } from "./checker_service.ts";
import { serveStdio } from "./stdio_worker.ts";

await serveStdio(createCheckerService);

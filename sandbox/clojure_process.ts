/**
 * The Clojure checker worker as a process: `deno run` of this file with every permission
 * denied, messages as JSON lines over stdin/stdout (sandbox/stdio_worker.ts). Being a
 * process, it can always be stopped: the pool kills it when a checker hangs.
 *
 * Permissions: none.
 */
import { createClojureService } from "./clojure_service.ts";
import { serveStdio } from "./stdio_worker.ts";

await serveStdio(createClojureService);

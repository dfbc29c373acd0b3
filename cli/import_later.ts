/** `import()` of a module that `deno run` does not read before main.ts starts (core/import_later.ts). */
export { importLater } from "../core/import_later.ts";

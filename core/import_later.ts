/**
 * `import()` of a module that `deno run` does not read before main.ts starts.
 *
 * Before it evaluates anything, `deno run` builds the module graph of main.ts, and that graph
 * follows every `import("./literal.ts")` too: for `dvergr --help` it read ~400 modules (every
 * command's, the MCP SDK's, PostgreSQL's) and set up node_modules for their npm packages
 * 34 times over (`strace -f -c`: ~17,000 system calls, 0.2 s of CPU; nodeModulesDir "auto").
 * A computed specifier is not followed: the module's own graph is built when it is imported,
 * so a command pays for its modules and no other's. `M` is given as
 * `typeof import("./x.ts")`, a type-only reference that `deno check` follows and `deno run`
 * does not: `importLater<typeof import("./x.ts")>("./x.ts", import.meta.url)`. The same holds
 * inside a command: the adapters load PostgreSQL, the command sandbox, the agent CLIs and the
 * world MCP server this way, so a run of built-ins builds none of their graphs (nor their npm
 * packages' node_modules). `deno compile` does not follow them either: the compile task
 * includes `cli` and `adapters`. In the kernel, so that every layer may use it.
 */
export function importLater<M>(specifier: string, base: string): Promise<M> {
  return import(new URL(specifier, base).href);
}

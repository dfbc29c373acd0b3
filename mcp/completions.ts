/**
 * completion/complete: values for a prompt's arguments and a resource template's variables,
 * from the home as it stands: rooms, a room's bundles, a room's experiment ids, and candidate
 * specs (the built-ins, the home's named commands as cmd:NAME, the model registry's ids and
 * aliases). An argument of no such kind, or a prompt or template this connection does not
 * have, completes to nothing (an empty list, as the protocol asks).
 */
import type { Home } from "../core/ports/home.ts";
import { readNamedCommands } from "../adapters/candidates/named/candidates_file.ts";
import { loadRegistry } from "../adapters/providers/load_registry.ts";

/** At most this many values per answer (the protocol's ceiling). */
export const MAX_VALUES = 100;

export interface Completion {
  values: string[];
  total: number;
  hasMore: boolean;
}

/** What kind of value an argument or template variable names. */
type Kind = "room" | "bundle" | "experiment" | "candidate";

const KINDS: Record<string, Kind> = {
  room: "room",
  bundle: "bundle",
  name: "bundle",
  experiment: "experiment",
  candidate: "candidate",
  candidates: "candidate",
};

async function rooms(home: Home): Promise<string[]> {
  return await home.rooms.listRooms();
}

async function bundles(home: Home, room: string | undefined): Promise<string[]> {
  if (!room || !(await home.rooms.hasRoom(room))) return [];
  const names = new Set<string>();
  for (const path of (await home.rooms.readFiles(room, "workflows")).keys()) {
    const m = /^workflows\/([^/]+)\/workflow\.edn$/.exec(path);
    if (m) names.add(m[1]);
  }
  return [...names].sort();
}

async function experiments(home: Home, room: string | undefined): Promise<string[]> {
  if (!room || !(await home.rooms.hasRoom(room))) return [];
  return (await home.state.listExperiments(room)).reverse().map((m) => m.id);
}

async function candidates(home: Home): Promise<string[]> {
  const out = ["builtin:reference", "builtin:noop"];
  try {
    for (const name of (await readNamedCommands(home.candidatesFile)).keys()) {
      out.push(`cmd:${name}`);
    }
  } catch {
    // No candidates.edn (or one that does not read): no named commands to offer.
  }
  try {
    const registry = await loadRegistry({ homeDir: home.dir });
    out.push(...[...registry.entries.keys()].sort(), ...[...registry.aliases.keys()].sort());
  } catch {
    // A registry that does not read offers no models here; benchmarks say why.
  }
  return out;
}

/**
 * The completion of `argument` (its name and the text typed so far), given the other
 * arguments already filled (`context`, e.g. the room when completing a bundle).
 */
export async function complete(
  home: Home,
  argument: { name: string; value: string },
  context: Record<string, string>,
): Promise<Completion> {
  const kind = KINDS[argument.name];
  let all: string[] = [];
  if (kind === "room") all = await rooms(home);
  else if (kind === "bundle") all = await bundles(home, context.room);
  else if (kind === "experiment") all = await experiments(home, context.room);
  else if (kind === "candidate") all = await candidates(home);
  // A comma-separated list completes its last item.
  const comma = kind === "candidate" ? argument.value.lastIndexOf(",") : -1;
  const head = comma < 0 ? "" : argument.value.slice(0, comma + 1);
  const typed = argument.value.slice(comma + 1).trimStart();
  const matching = [...new Set(all)].filter((v) => v.startsWith(typed)).map((v) => head + v);
  return {
    values: matching.slice(0, MAX_VALUES),
    total: matching.length,
    hasMore: matching.length > MAX_VALUES,
  };
}

/**
 * The resource limits of command candidates (and agent CLIs) as data: what an attempt may
 * consume, the defaults, the flags' and MCP's form (MiB and counts), and how they are
 * recorded and shown. The kernel enforces them (adapters/candidates/command/limits.ts).
 */

/** What a command candidate may consume in one attempt. */
export interface ResourceLimits {
  /** Memory of the attempt's processes (bytes). */
  memoryBytes: number;
  /** Bytes it may write under each writable world directory, and under /tmp (bytes). */
  worldBytes: number;
  /** Processes and threads at once. */
  processes: number;
  /** Open files per process. */
  openFiles: number;
}

const MIB = 1024 * 1024;

export const DEFAULT_LIMITS: ResourceLimits = {
  memoryBytes: 4096 * MIB,
  worldBytes: 1024 * MIB,
  processes: 512,
  openFiles: 1024,
};

/** The default limits with the given ones (MiB and counts, as flags and MCP give them). */
export function limitsFrom(given: {
  memoryMiB?: number;
  worldMiB?: number;
  processes?: number;
  openFiles?: number;
}): ResourceLimits {
  return {
    memoryBytes: given.memoryMiB !== undefined ? given.memoryMiB * MIB : DEFAULT_LIMITS.memoryBytes,
    worldBytes: given.worldMiB !== undefined ? given.worldMiB * MIB : DEFAULT_LIMITS.worldBytes,
    processes: given.processes ?? DEFAULT_LIMITS.processes,
    openFiles: given.openFiles ?? DEFAULT_LIMITS.openFiles,
  };
}

/** The limits as recorded in an experiment definition and shown in the report. */
export function limitsIdentity(l: ResourceLimits): Record<string, number> {
  return {
    memoryMiB: Math.round(l.memoryBytes / MIB),
    worldMiB: Math.round(l.worldBytes / MIB),
    processes: l.processes,
    openFiles: l.openFiles,
  };
}

/** "memory 4096 MiB, world 1024 MiB, 512 processes, 1024 open files". */
export function describeLimits(l: ResourceLimits): string {
  const id = limitsIdentity(l);
  return `memory ${id.memoryMiB} MiB, world ${id.worldMiB} MiB, ${id.processes} processes, ` +
    `${id.openFiles} open files`;
}

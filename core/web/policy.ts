/**
 * A bundle's web policy (docs/compatibility.md §9.3, DESIGN "Web effects"): an allow-list (null = any
 * host) and a deny-list. Allow-lists meet — the result allows a host iff both do — and are
 * kept minimal (no listed host under another), so composition is associative; deny-lists
 * join (union, also minimal). Deny is decided first: a host both allowed and blocked is
 * `blocked`. The deny-list sits outside every answering handler (live, frozen): callers
 * decide before any transport is asked.
 *
 * A user's policy (`--allow-sources`/`--block-sources`, the home's `web-policy.edn`) is
 * composed with the bundle's the same way, so it can only narrow what the bundle lets an
 * attempt read: it never turns a web on, never widens an allow-list, never unblocks a host.
 */
import type { WorkflowDefinition } from "../bundle/types.ts";
import type { DenialReason } from "./types.ts";
import { isUnder, normalizeHost } from "./host.ts";

export interface WebPolicy {
  /** Hosts (and their subdomains) that may be read; null: any host. */
  allow: string[] | null;
  /** Hosts (and their subdomains) that may not be read. */
  deny: string[];
}

/** The policy that refuses nothing. */
export const OPEN_POLICY: WebPolicy = { allow: null, deny: [] };

/** Hosts sorted, without duplicates and without any host under another listed one. */
export function minimalHosts(hosts: readonly string[]): string[] {
  const uniq = [...new Set(hosts.map(normalizeHost))].filter((h) => h !== "");
  return uniq.filter((h) => !uniq.some((o) => o !== h && isUnder(h, o))).sort();
}

/** What both allow-lists allow (null allows any host). */
export function meetAllow(a: string[] | null, b: string[] | null): string[] | null {
  if (a === null) return b === null ? null : minimalHosts(b);
  if (b === null) return minimalHosts(a);
  const out: string[] = [];
  for (const x of a.map(normalizeHost)) {
    for (const y of b.map(normalizeHost)) {
      // Domains form a tree: hosts under both x and y are those under the deeper of them.
      if (isUnder(x, y)) out.push(x);
      else if (isUnder(y, x)) out.push(y);
    }
  }
  return minimalHosts(out);
}

/** What either deny-list denies. */
export function joinDeny(a: readonly string[], b: readonly string[]): string[] {
  return minimalHosts([...a, ...b]);
}

/** Two policies in force at once: allow-lists meet, deny-lists join. */
export function composePolicies(a: WebPolicy, b: WebPolicy): WebPolicy {
  return { allow: meetAllow(a.allow, b.allow), deny: joinDeny(a.deny, b.deny) };
}

/** A bundle's policy from its :allowed-sources and :blocked-sources. */
export function policyOf(
  def: Pick<WorkflowDefinition, "allowedSources" | "blockedSources">,
): WebPolicy {
  return {
    allow: def.allowedSources === undefined ? null : minimalHosts(def.allowedSources),
    deny: minimalHosts(def.blockedSources ?? []),
  };
}

/** False when the policy lets no host at all be read (`:allowed-sources []`, or all denied). */
export function readsAnything(p: WebPolicy): boolean {
  if (p.allow === null) return true;
  return p.allow.some((a) => !p.deny.some((d) => isUnder(a, d)));
}

export type PolicyDecision =
  | { ok: true }
  | { ok: false; reason: Extract<DenialReason, "blocked" | "not-allowed">; message: string };

/** Whether a (normalised) host may be read, and if not, who refused it and why. */
export function decideHost(p: WebPolicy, host: string): PolicyDecision {
  const h = normalizeHost(host);
  if (p.deny.some((d) => isUnder(h, d))) {
    return { ok: false, reason: "blocked", message: `${h} is a blocked source for this task` };
  }
  if (p.allow !== null && !p.allow.some((a) => isUnder(h, a))) {
    return {
      ok: false,
      reason: "not-allowed",
      message: `${h} is not among the sources this task may read`,
    };
  }
  return { ok: true };
}

/**
 * True when the bundle's :allowed-sources names this host itself (not a parent domain):
 * only then may a request reach a loopback, private or link-local address.
 */
export function namesHostExplicitly(
  def: Pick<WorkflowDefinition, "allowedSources">,
  host: string,
): boolean {
  const h = normalizeHost(host);
  return (def.allowedSources ?? []).some((s) => normalizeHost(s) === h);
}

/** How an attempt meets the web: not at all, the live internet, or the bundle's web.edn. */
export type WebMode = "off" | "live" | "frozen";

/**
 * The web a bundle's attempts get. `:web :frozen` → frozen; `:web :live`, `:fetched true` or
 * any source list → live; a bundle that says nothing about the web gets none (least
 * privilege: the web is opted into). A policy that lets nothing be read (the bundle's, or
 * the bundle's composed with the user's `user`) also means none.
 */
export function webModeOf(
  def: Pick<WorkflowDefinition, "web" | "fetched" | "allowedSources" | "blockedSources">,
  user: WebPolicy | null = null,
): WebMode {
  const wanted: WebMode = def.web === "frozen"
    ? "frozen"
    : def.web === "live" || def.fetched || def.allowedSources !== undefined ||
        def.blockedSources !== undefined
    ? "live"
    : "off";
  if (wanted === "off") return "off";
  return readsAnything(effectivePolicy(def, user)) ? wanted : "off";
}

// ---- a user's policy ----

/**
 * A user's sources, as `--allow-sources`/`--block-sources` and the home's `web-policy.edn`
 * (`:allowed-sources`, `:blocked-sources`) give them: host names, each covering its
 * subdomains, in the syntax of a bundle's source lists.
 */
export interface UserSources {
  /** The only hosts attempts may read; absent: whatever the bundle allows. */
  allow?: readonly string[];
  /** Hosts attempts may not read. */
  block?: readonly string[];
}

/** A user's sources as a policy. */
export function sourcesPolicy(s: UserSources): WebPolicy {
  return {
    allow: s.allow === undefined ? null : minimalHosts(s.allow),
    deny: minimalHosts(s.block ?? []),
  };
}

/** A policy as sources again (what a queued experiment carries to workers). */
export function sourcesOf(p: WebPolicy): UserSources {
  return {
    ...(p.allow !== null ? { allow: p.allow } : {}),
    ...(p.deny.length > 0 ? { block: p.deny } : {}),
  };
}

/**
 * The user's policy: the home's file (null: none) composed with the flags (absent or empty:
 * none); null when neither says anything.
 */
export function userPolicyOf(
  home: WebPolicy | null,
  flags: UserSources | undefined,
): WebPolicy | null {
  const given = flags !== undefined && (flags.allow !== undefined || flags.block !== undefined)
    ? sourcesPolicy(flags)
    : null;
  if (home === null) return given;
  return given === null ? home : composePolicies(home, given);
}

/** The policy an attempt meets: the bundle's, composed with the user's when there is one. */
export function effectivePolicy(
  def: Pick<WorkflowDefinition, "allowedSources" | "blockedSources">,
  user: WebPolicy | null,
): WebPolicy {
  const bundle = policyOf(def);
  return user === null ? bundle : composePolicies(bundle, user);
}

/**
 * What of the web policy belongs in the experiment's identity: the composed policy when
 * the bundle's attempts have a web (live or frozen: a frozen web cannot answer a denied
 * host either) and the user's policy changes what the bundle's alone would decide; else
 * null, so an experiment without a user policy keeps the id it had.
 */
export function policyIdentity(
  def: Pick<WorkflowDefinition, "web" | "fetched" | "allowedSources" | "blockedSources">,
  user: WebPolicy | null,
): WebPolicy | null {
  if (user === null || webModeOf(def) === "off") return null;
  const composed = effectivePolicy(def, user);
  const bundle = policyOf(def);
  const same = JSON.stringify(composed) === JSON.stringify(bundle);
  return same ? null : composed;
}

/**
 * Why a user's source entry is not a host name as source lists hold them (null: it is one):
 * a URL, a path, a port, a space or a name a URL would spell otherwise never matches a host.
 */
export function sourceProblem(entry: string): string | null {
  const h = normalizeHost(entry);
  let parsed: string | null = null;
  try {
    parsed = new URL(`http://${h}/`).hostname;
  } catch {
    parsed = null;
  }
  if (parsed === h && /^([a-z0-9_-]+(\.[a-z0-9_-]+)*|\[[0-9a-f:.]+\])$/.test(h)) return null;
  let host: string | null = null;
  try {
    host = new URL(entry).hostname || null;
  } catch {
    host = null;
  }
  return host !== null
    ? `${JSON.stringify(entry)} is a URL: a source is a host name such as ${
      JSON.stringify(normalizeHost(host))
    } (it covers its subdomains and every path)`
    : `${JSON.stringify(entry)} is not a host name such as "docs.example.com"`;
}

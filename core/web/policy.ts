/**
 * A bundle's web policy (docs/compatibility.md §9.3, DESIGN "Web effects"): an allow-list (null = any
 * host) and a deny-list. Allow-lists meet — the result allows a host iff both do — and are
 * kept minimal (no listed host under another), so composition is associative; deny-lists
 * join (union, also minimal). Deny is decided first: a host both allowed and blocked is
 * `blocked`. The deny-list sits outside every answering handler (live, frozen): callers
 * decide before any transport is asked.
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
 * privilege: the web is opted into). A policy that lets nothing be read also means none.
 */
export function webModeOf(
  def: Pick<WorkflowDefinition, "web" | "fetched" | "allowedSources" | "blockedSources">,
): WebMode {
  const wanted: WebMode = def.web === "frozen"
    ? "frozen"
    : def.web === "live" || def.fetched || def.allowedSources !== undefined ||
        def.blockedSources !== undefined
    ? "live"
    : "off";
  if (wanted === "off") return "off";
  return readsAnything(policyOf(def)) ? wanted : "off";
}

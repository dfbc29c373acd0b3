/**
 * Hosts as the web policy compares them (docs/compatibility.md §9.3): the authority's host, lower-cased,
 * userinfo dropped, a leading `www.` removed; "under" is equal or a subdomain.
 */

/** The normalised host of a URL, or null when it is not an absolute URL with a host. */
export function hostOf(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  // URL drops userinfo from hostname already; IPv6 literals keep their brackets.
  return u.hostname === "" ? null : normalizeHost(u.hostname);
}

/** A host name (or a bundle's source entry) as compared: lower-case, no `www.`, no final dot. */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  const at = h.lastIndexOf("@");
  if (at >= 0) h = h.slice(at + 1);
  if (h.endsWith(".")) h = h.slice(0, -1);
  if (h.startsWith("www.")) h = h.slice(4);
  return h;
}

/** True when `host` equals `listed` or is a subdomain of it (`docs.simm.is` is under `simm.is`). */
export function isUnder(host: string, listed: string): boolean {
  return host === listed || host.endsWith("." + listed);
}

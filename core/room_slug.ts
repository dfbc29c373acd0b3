/** Room slugs: the names rooms go by (a directory of the home, a path segment of ROOM/NAME). */
import { DvergrError } from "./errors.ts";

const SLUG = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** Refuses a room slug that is not lowercase letters, digits and dashes. */
export function checkSlug(slug: string): void {
  if (!SLUG.test(slug)) {
    throw new DvergrError(
      "ROOM_INVALID",
      `Cannot use room "${slug}": a room slug is lowercase letters, digits and dashes (at most 64)`,
      { hint: "Choose a slug such as `books` or `invoice-coding`" },
    );
  }
}

/** Whether `slug` is a room slug. */
export function isSlug(slug: string): boolean {
  return SLUG.test(slug);
}

/**
 * A room slug for a bundle name: lower case, runs of anything but letters and digits
 * become one dash, trimmed, at most 64 characters ("Bank Booking" → "bank-booking").
 */
export function roomSlug(name: string): string {
  const slug = name.toLowerCase().normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
    .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 64).replace(/-+$/, "");
  return slug || "bundle";
}

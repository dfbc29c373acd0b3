/** Workflow names: what a bundle may be called in a room and in an export (docs/compatibility.md §1.1). */
import { DvergrError } from "../errors.ts";

const NAME = /^[a-z0-9][a-z0-9-]*$/;

/** Whether `name` is a workflow name: lowercase letters, digits and dashes, at most 255. */
export function isBundleName(name: string): boolean {
  // A bundle is a directory of that name: longer, no file system holds it.
  return NAME.test(name) && name.length <= 255;
}

/** A workflow name close to `name` ("Bank Booking" → "bank-booking"). */
export function suggestName(name: string): string {
  const s = name.toLowerCase().normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
    .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 64).replace(/-+$/, "");
  return s || "my-workflow";
}

/** Refuses a workflow name outside `[a-z0-9][a-z0-9-]*` or over 255 characters (USAGE). */
export function checkBundleName(name: string, hint?: string): void {
  if (!isBundleName(name)) {
    throw new DvergrError(
      "USAGE",
      `Cannot use workflow name ${
        JSON.stringify(name)
      }: a workflow name is lowercase letters, digits and dashes, at most 255 characters`,
      {
        hint: hint ?? `Choose a name such as "${suggestName(name)}"`,
        details: { name },
      },
    );
  }
}

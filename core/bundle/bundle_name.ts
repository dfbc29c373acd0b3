/** Workflow names: what a bundle may be called in a room and in an export (REFERENCE §1.1). */
import { DvergrError } from "../errors.ts";

const NAME = /^[a-z0-9][a-z0-9-]*$/;

/** Whether `name` is a workflow name: lowercase letters, digits and dashes. */
export function isBundleName(name: string): boolean {
  return NAME.test(name);
}

/** A workflow name close to `name` ("Bank Booking" → "bank-booking"). */
export function suggestName(name: string): string {
  const s = name.toLowerCase().normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
    .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
  return s || "my-workflow";
}

/** Refuses a workflow name outside `[a-z0-9][a-z0-9-]*` with a USAGE error. */
export function checkBundleName(name: string, hint?: string): void {
  if (!isBundleName(name)) {
    throw new DvergrError(
      "USAGE",
      `Cannot use workflow name ${
        JSON.stringify(name)
      }: a workflow name is lowercase letters, digits and dashes`,
      {
        hint: hint ?? `Choose a name such as "${suggestName(name)}"`,
        details: { name },
      },
    );
  }
}

/**
 * The web client port: the web of a bundle's attempts — its policy in front of a live
 * transport (GETs from the host, a search API) or a frozen one (`web.edn`), every request
 * recorded. Implemented by adapters/web/.
 */
import type { Bundle } from "../bundle/types.ts";
import type { WebMode, WebPolicy } from "../web/policy.ts";
import type { WebRecorder } from "../web/record.ts";
import type { WorldWeb } from "../web/types.ts";

/** One attempt's web: what its tools call, and the record of what they did. */
export interface AttemptWeb {
  web: WorldWeb;
  recorder: WebRecorder;
}

/** How the host reaches the live web besides the environment (tests: local servers). */
export interface LiveWebOptions {
  fetchImpl?: typeof fetch;
  /** Host name → addresses (the policy refuses private ones after resolution). */
  resolve?: (host: string) => Promise<string[]>;
  maxBytes?: number;
  timeoutMs?: number;
}

/** The web of one bundle's attempts. */
export interface BundleWeb {
  mode: WebMode;
  /** Checks now what the live web needs from the environment (its search key). */
  preflight(): void;
  /** A new attempt's web, or null when the bundle lets it read nothing. */
  open(): AttemptWeb | null;
}

export interface WebClient {
  /**
   * The web of `bundle`'s attempts, reading keys from `env` when first needed, under the
   * bundle's policy composed with the user's `policy` (core/web/policy.ts) when given.
   */
  forBundle(
    bundle: Bundle,
    opts: {
      env: (name: string) => string | undefined;
      live?: LiveWebOptions;
      policy?: WebPolicy | null;
    },
  ): BundleWeb;
  /**
   * The web policy of the home at `homeDir` (its `web-policy.edn`), or null when it has
   * none; a malformed file is a DvergrError naming its line and field.
   */
  homePolicy(homeDir: string): Promise<WebPolicy | null>;
}

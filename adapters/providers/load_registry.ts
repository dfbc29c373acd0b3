/**
 * The model registry as a run sees it: the shipped models.edn, merged with the home's.
 * Needs --allow-read for the home.
 */
import { DvergrError } from "../../core/errors.ts";
import {
  buildRegistry,
  type ModelRegistry,
  parseModelsEdn,
  SHIPPED_MODELS_EDN,
  SHIPPED_MODELS_FILE,
} from "../../core/models/registry.ts";

/** The shipped registry merged with `<homeDir>/models.edn` when that file exists. */
export async function loadRegistry(opts: { homeDir?: string } = {}): Promise<ModelRegistry> {
  const layers = [parseModelsEdn(SHIPPED_MODELS_EDN, SHIPPED_MODELS_FILE)];
  if (opts.homeDir) {
    const file = `${opts.homeDir.replace(/\/+$/, "")}/models.edn`;
    let text: string | null = null;
    try {
      text = await Deno.readTextFile(file);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) {
        throw new DvergrError(
          "REGISTRY_INVALID",
          `Cannot read the model registry ${JSON.stringify(file)}: ${(e as Error).message}`,
          {
            hint: "Check the file's permissions, or remove it to use the shipped registry",
            details: { file },
            cause: e,
          },
        );
      }
    }
    if (text !== null) layers.push(parseModelsEdn(text, file));
  }
  return buildRegistry(layers);
}

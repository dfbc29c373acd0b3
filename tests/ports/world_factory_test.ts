/** The World contract (world_factory_contract.ts) on both kinds of world the factory makes. */
import { worldContract } from "./world_factory_contract.ts";
import { worldFactory } from "../../adapters/world/world.ts";

worldContract("directory", (fixtures, mkdirs) => worldFactory.create(fixtures, { mkdirs }));
worldContract(
  "memory",
  (fixtures, mkdirs) => Promise.resolve(worldFactory.memory(fixtures, { mkdirs })),
);

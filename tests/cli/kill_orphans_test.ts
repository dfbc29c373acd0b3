/**
 * dvergr killed with SIGKILL mid-attempt leaves no process of its own behind: the sandbox
 * (bubblewrap dies with its parent, and its PID namespace with it: the supervisor, its time
 * limit, the gateway's forwarder, the candidate). The sandbox's marks come on its stderr
 * pipe: no reader of ours runs beside it. Wall time ~5 s.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { DVERGR_PERMISSIONS } from "../../core/permissions.ts";
import { wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";
import { descendants, gone, type Proc } from "../helpers/processes.ts";
import { detectBwrap } from "../../adapters/candidates/command/command.ts";
import { socatBinary, tcpserverBinary } from "../../adapters/gateway/attempt_gateway.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const hasBwrap = await detectBwrap((k) => Deno.env.get(k));

Deno.test({
  name:
    "dvergr benchmark killed with SIGKILL mid-attempt leaves no socat, bwrap, supervisor or candidate",
  ignore: !hasBwrap,
  async fn() {
    const dir = await writeBundleTo(wordDataset(1));
    const home = await Deno.makeTempDir();
    // A candidate whose command is recognisable in the process table and never ends by itself.
    const marker = "sleep 987.654";
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...DVERGR_PERMISSIONS,
        `${ROOT}main.ts`,
        "benchmark",
        dir,
        "--candidate",
        `stuck=cmd:${marker}`,
        "--timeout-ms",
        "600000",
        "--home",
        home,
      ],
      cwd: ROOT,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    // Bounded: until the candidate runs (its whole sandbox is set up by then).
    let ours: Proc[] = [];
    const deadline = Date.now() + 120_000;
    while (!ours.some((p) => p.cmd === marker) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      ours = descendants(child.pid);
    }
    const names = ours.map((p) => p.cmd.split(" ")[0].split("/").at(-1));
    try {
      assert.ok(ours.some((p) => p.cmd === marker), `the candidate never ran: ${names}`);
      for (
        const name of [
          "bwrap",
          "sh",
          "sleep",
          ...(socatBinary() ? [tcpserverBinary() ? "tcpserver" : "socat"] : []),
        ]
      ) {
        assert.ok(names.includes(name), `${names}`);
      }
    } finally {
      child.kill("SIGKILL");
      await child.status;
    }
    // Gone as soon as they are: the deadline only fails when they really remain.
    const left = await gone(ours, 60_000);
    assert.deepEqual(left, [], `left behind: ${JSON.stringify(left)}`);
    await Deno.remove(home, { recursive: true });
    await Deno.remove(dir.slice(0, dir.lastIndexOf("/")), { recursive: true });
  },
});

import assert from "node:assert/strict";
import { isInternalAddress, isIpLiteral } from "../../../core/web/address.ts";

Deno.test("isInternalAddress() refuses loopback, private, link-local and friends, v4 and v6", () => {
  for (
    const a of [
      "127.0.0.1",
      "127.9.9.9",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "0.0.0.0",
      "100.64.0.1",
      "224.0.0.1",
      "255.255.255.255",
      "::1",
      "[::1]",
      "::",
      "fe80::1%eth0",
      "fd00::1",
      "fc12::",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "ff02::1",
      "nonsense",
    ]
  ) assert.equal(isInternalAddress(a), true, a);
  for (
    const a of [
      "93.184.216.34",
      "172.32.0.1",
      "8.8.8.8",
      "2606:4700::1111",
      "::ffff:8.8.8.8",
      "100.128.0.1",
    ]
  ) {
    assert.equal(isInternalAddress(a), false, a);
  }
});

Deno.test("isIpLiteral() tells addresses from names", () => {
  assert.equal(isIpLiteral("127.0.0.1"), true);
  assert.equal(isIpLiteral("[::1]"), true);
  assert.equal(isIpLiteral("localhost"), false);
  assert.equal(isIpLiteral("1.2.3"), false);
});

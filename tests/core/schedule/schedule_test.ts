import assert from "node:assert/strict";
import {
  dueSlot,
  everyText,
  firstSlot,
  nextRun,
  readAt,
  readEvery,
} from "../../../core/schedule/schedule.ts";
import { scheduleRecord } from "../../ports/deploy_records_contract.ts";

const DAY = 86_400_000;
const t = (iso: string) => Date.parse(iso);

Deno.test("readEvery() takes m, h, d and w, at least a minute; readAt() takes HH:MM", () => {
  assert.deepEqual(readEvery("1h"), { ms: 3_600_000 });
  assert.deepEqual(readEvery("7d"), { ms: 7 * DAY });
  assert.deepEqual(readEvery("2w"), { ms: 14 * DAY });
  assert.match((readEvery("0m") as { problem: string }).problem, /shortest interval is one minute/);
  assert.match((readEvery("10s") as { problem: string }).problem, /m, h, d or w/);
  assert.match((readEvery("400d") as { problem: string }).problem, /a year/);
  assert.equal(readAt("06:30"), 390);
  assert.equal(readAt("24:00"), null);
  assert.equal(readAt("6:30"), null);
  assert.equal(everyText(7 * DAY), "7d");
  assert.equal(everyText(90 * 60_000), "90m");
});

Deno.test("firstSlot() is the creation moment, or the next HH:MM (UTC) from it", () => {
  assert.equal(firstSlot(t("2026-03-01T10:00:00Z"), null), t("2026-03-01T10:00:00Z"));
  assert.equal(firstSlot(t("2026-03-01T05:00:00Z"), 390), t("2026-03-01T06:30:00Z"));
  assert.equal(firstSlot(t("2026-03-01T07:00:00Z"), 390), t("2026-03-02T06:30:00Z"));
});

Deno.test("dueSlot(): only the latest slot that came is due, once; a missed week runs once", () => {
  const s = scheduleRecord({ anchor: t("2026-03-01T06:30:00Z"), everyMs: DAY });
  assert.equal(dueSlot(s, t("2026-03-01T06:29:59Z")), null);
  assert.equal(nextRun(s, t("2026-03-01T00:00:00Z")), t("2026-03-01T06:30:00Z"));
  assert.equal(dueSlot(s, t("2026-03-01T06:30:00Z")), t("2026-03-01T06:30:00Z"));
  // Nobody ticked for a week: the latest slot is due, not the seven before it.
  const late = t("2026-03-08T12:00:00Z");
  assert.equal(dueSlot(s, late), t("2026-03-08T06:30:00Z"));
  const claimed = { ...s, lastSlot: t("2026-03-08T06:30:00Z") };
  assert.equal(dueSlot(claimed, late), null);
  assert.equal(nextRun(claimed, late), t("2026-03-09T06:30:00Z"));
  assert.equal(dueSlot({ ...s, cancelledAt: "x" }, late), null);
  assert.equal(nextRun({ ...s, cancelledAt: "x" }, late), null);
});

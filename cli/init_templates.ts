/**
 * The bundles `dvergr init` writes, as text imported with the program (so they are there
 * in the npm package and in a compiled binary alike). Each is a bundle of its own under
 * cli/init_templates/ that passes `dvergr check` and `dvergr calibrate` as it is
 * (tests/cli/init_test.ts).
 */
import singleCalibration from "./init_templates/single/calibration.edn" with { type: "text" };
import singleChecker from "./init_templates/single/checker.js" with { type: "text" };
import singleTicket from "./init_templates/single/fixtures/docs/ticket.md" with { type: "text" };
import singleGold from "./init_templates/single/gold.edn" with { type: "text" };
import singleWorkflow from "./init_templates/single/workflow.edn" with { type: "text" };
import datasetCalibration from "./init_templates/dataset/calibration.edn" with { type: "text" };
import datasetCasesT1Ticket from "./init_templates/dataset/cases/t1/fixtures/docs/ticket.md" with {
  type: "text",
};
import datasetCasesT1Gold from "./init_templates/dataset/cases/t1/gold.edn" with { type: "text" };
import datasetCasesT2Ticket from "./init_templates/dataset/cases/t2/fixtures/docs/ticket.md" with {
  type: "text",
};
import datasetCasesT2Gold from "./init_templates/dataset/cases/t2/gold.edn" with { type: "text" };
import datasetCasesT3Ticket from "./init_templates/dataset/cases/t3/fixtures/docs/ticket.md" with {
  type: "text",
};
import datasetCasesT3Gold from "./init_templates/dataset/cases/t3/gold.edn" with { type: "text" };
import datasetChecker from "./init_templates/dataset/checker.js" with { type: "text" };
import datasetPolicy from "./init_templates/dataset/fixtures/docs/policy.md" with { type: "text" };
import datasetWorkflow from "./init_templates/dataset/workflow.edn" with { type: "text" };
import webCalibration from "./init_templates/web/calibration.edn" with { type: "text" };
import webChecker from "./init_templates/web/checker.js" with { type: "text" };
import webRequest from "./init_templates/web/fixtures/docs/request.md" with { type: "text" };
import webGold from "./init_templates/web/gold.edn" with { type: "text" };
import webWeb from "./init_templates/web/web.edn" with { type: "text" };
import webWorkflow from "./init_templates/web/workflow.edn" with { type: "text" };

export const TEMPLATES = ["single", "dataset", "web"] as const;
export type TemplateName = typeof TEMPLATES[number];

/** The files of each template, by relative path. */
export const TEMPLATE_FILES: Record<TemplateName, ReadonlyMap<string, string>> = {
  single: new Map([
    ["calibration.edn", singleCalibration],
    ["checker.js", singleChecker],
    ["fixtures/docs/ticket.md", singleTicket],
    ["gold.edn", singleGold],
    ["workflow.edn", singleWorkflow],
  ]),
  dataset: new Map([
    ["calibration.edn", datasetCalibration],
    ["cases/t1/fixtures/docs/ticket.md", datasetCasesT1Ticket],
    ["cases/t1/gold.edn", datasetCasesT1Gold],
    ["cases/t2/fixtures/docs/ticket.md", datasetCasesT2Ticket],
    ["cases/t2/gold.edn", datasetCasesT2Gold],
    ["cases/t3/fixtures/docs/ticket.md", datasetCasesT3Ticket],
    ["cases/t3/gold.edn", datasetCasesT3Gold],
    ["checker.js", datasetChecker],
    ["fixtures/docs/policy.md", datasetPolicy],
    ["workflow.edn", datasetWorkflow],
  ]),
  web: new Map([
    ["calibration.edn", webCalibration],
    ["checker.js", webChecker],
    ["fixtures/docs/request.md", webRequest],
    ["gold.edn", webGold],
    ["web.edn", webWeb],
    ["workflow.edn", webWorkflow],
  ]),
};

/** What a scorecard says about its candidates, without times and costs (which vary run to run). */
import type { Scorecard } from "../../core/bench/scorecard.ts";

export function scorecardEssentials(card: Scorecard) {
  return {
    complete: card.complete,
    gradedCells: card.gradedCells,
    leaderboard: card.leaderboard,
    candidates: card.candidates.map((c) => ({
      candidate: c.candidate,
      attempts: c.attempts,
      passes: c.passes,
      meanReward: c.meanReward,
      rewardInterval: c.rewardInterval,
      passInterval: c.passInterval,
      checkRates: c.checkRates,
      failedChecks: c.failedChecks,
      faults: c.faults,
    })),
    comparisons: card.comparisons.map((c) => ({
      ...c,
      costPerPassRatio: null,
      microsPerPassSaved: null,
    })),
  };
}

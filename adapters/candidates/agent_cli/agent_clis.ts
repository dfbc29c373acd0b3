/**
 * The agent CLIs dvergr can run, by name: what the kind's parser needs, apart from the
 * candidate itself (agent_cli.ts), which loads the sandbox and the gateway.
 */
export const AGENT_CLIS = ["claude-code", "codex"] as const;
export type AgentCli = typeof AGENT_CLIS[number];

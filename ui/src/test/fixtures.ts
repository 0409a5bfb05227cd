import type { ApprovalDto, AppState, CreatedToken, ProjectDto, TokenDto } from "../bindings/ipc";

export const state = (over: Partial<AppState> = {}): AppState => ({
  paused: false,
  emergencyStopAvailable: false,
  port: 7457,
  mcpUrl: "http://127.0.0.1:7457/mcp",
  dataDir: "/home/me/.local/share/sluice",
  secret: { inKeychain: false, location: "/home/me/.local/share/sluice/secret", reason: "no Secret Service" },
  version: "0.1.0",
  ...over,
});

export const project = (over: Partial<ProjectDto> = {}): ProjectDto => ({
  id: "proj_aaaaaaaaaaaaaaaa",
  name: "my-app",
  root: "/home/me/code/my-app",
  access: "read-only",
  exec: "off",
  status: "available",
  reason: null,
  shield: null,
  policy: { askDeletes: true, askWrites: false },
  createdMs: 1_700_000_000_000,
  ...over,
});

export const token = (over: Partial<TokenDto> = {}): TokenDto => ({
  id: "tok_aaaaaaaaaaaaaaaa",
  label: "Cursor",
  scope: null,
  createdMs: 1_700_000_000_000,
  lastUsedMs: null,
  expiresMs: null,
  revokedMs: null,
  ...over,
});

export const created = (): CreatedToken => ({
  token: token({ label: "Cursor on laptop" }),
  secret: "slc_" + "a".repeat(52),
  snippets: [
    { client: "claude-code", title: "Claude Code", target: "run in a terminal", text: "claude mcp add … slc_" + "a".repeat(52), holdsToken: true },
    { client: "cursor", title: "Cursor", target: "~/.cursor/mcp.json", text: '{"mcpServers":{}}', holdsToken: true },
  ],
});

export const approval = (over: Partial<ApprovalDto> = {}): ApprovalDto => ({
  id: "apr_aaaaaaaaaaaaaaaa",
  projectId: "proj_aaaaaaaaaaaaaaaa",
  projectName: "my-app",
  tokenId: "tok_aaaaaaaaaaaaaaaa",
  tokenLabel: "Cursor",
  tool: "delete_path",
  summary: "delete src/old.rs (2.1 KB, restorable)",
  createdMs: Date.now(),
  expiresMs: Date.now() + 300_000,
  status: "pending",
  reason: null,
  decidedMs: null,
  decidedBy: null,
  ...over,
});

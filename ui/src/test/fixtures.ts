import type {
  AllowRuleDto,
  ApprovalDto,
  AppState,
  AutoRunRuleDto,
  ClientDto,
  ClientHealthDto,
  ConfigPreview,
  ConnectionRequestDto,
  ConnectResult,
  CreatedToken,
  JobDto,
  PortCheck,
  ProjectDto,
  ReachStateDto,
  RepairResult,
  SandboxDto,
  TokenDto,
} from "../bindings/ipc";

export const state = (over: Partial<AppState> = {}): AppState => ({
  paused: false,
  stopped: false,
  port: 7457,
  mcpUrl: "http://127.0.0.1:7457/mcp",
  dataDir: "/home/me/.local/share/sluice",
  secret: { inKeychain: false, location: "/home/me/.local/share/sluice/secret", reason: "no Secret Service" },
  version: "0.1.0",
  confinement: "Landlock ABI 6: writes confined to the project; outbound TCP blocked",
  namespaces: true,
  guarantees: [
    { what: "writes only in the project and the job's private folders", holds: true },
    { what: "other processes invisible", holds: true },
  ],
  hiddenFromJobs: ["~/.ssh", "~/.aws"],
  registries: [
    { host: "index.crates.io", serves: "Rust crates (index)" },
    { host: "pypi.org", serves: "Python packages (index)" },
  ],
  registriesAvailable: true,
  integrity: [],
  sandboxAccount: null,
  ...over,
});

export const sandbox = (over: Partial<SandboxDto> = {}): SandboxDto => ({
  namespaces: true,
  full: true,
  summary: "namespaces: each job sees only its project; second layer: Landlock ABI 6",
  guarantees: [
    { what: "writes only in the project and the job's private folders", holds: true },
    { what: "the rest of the machine out of sight (other projects, the rest of the home)", holds: true },
  ],
  hidden: [
    { path: "~/.ssh", holds: "SSH keys", default: true, present: true },
    { path: "~/.npmrc", holds: "npm registry tokens", default: true, present: true },
    { path: "~/.aws", holds: "AWS credentials", default: true, present: false },
  ],
  unhidden: [],
  grants: [],
  sockets: [],
  socketWarning: "equivalent to full access to this machine: whatever listens on a socket like this (Docker, a system service, an agent) can run anything or act for you",
  requireFull: false,
  refusal: null,
  settings: { hide: [], unhide: [], grants: [], sockets: [], requireFull: false },
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
  autorun: null,
  policy: { askDeletes: true, askWrites: false },
  network: null,
  networkMode: "off",
  sandbox: sandbox(),
  showGitEmails: false,
  runGitHooks: false,
  worktreeOf: null,
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
  selfLimit: null,
  selfLimitedMs: null,
  remote: false,
  profile: "full",
  ...over,
});

export const created = (): CreatedToken => ({
  token: token({ label: "Cursor on laptop" }),
  secret: "slc_" + "a".repeat(52),
  snippets: [
    { client: "claude-code", title: "Claude Code", target: "run in a terminal", text: "claude mcp add … slc_" + "a".repeat(52), holdsToken: true, link: null, linkInstalls: null, plainText: true, note: null },
    {
      client: "cursor",
      title: "Cursor",
      target: "~/.cursor/mcp.json",
      text: '{"mcpServers":{}}',
      holdsToken: true,
      link: "cursor://anysphere.cursor-deeplink/mcp/install?name=sluice&config=e30%3D",
      linkInstalls: '{"url":"http://127.0.0.1:7651/mcp","headers":{"Authorization":"Bearer ${env:SLUICE_TOKEN}"}}',
      plainText: true,
      note: null,
    },
    {
      client: "codex",
      title: "Codex",
      target: "~/.codex/config.toml",
      text: "[mcp_servers.sluice]\n",
      holdsToken: false,
      link: null,
      linkInstalls: null,
      plainText: false,
      note: "Set SLUICE_TOKEN to the token in the environment Codex starts from.",
    },
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
  autorun: [],
  createdMs: Date.now(),
  expiresMs: Date.now() + 300_000,
  status: "pending",
  reason: null,
  decidedMs: null,
  decidedBy: null,
  alwaysAllowable: false,
  command: null,
  risk: null,
  ...over,
});

/** A short default auto-run list: one refused entry, two that ask. */
export const autorunDefaults = (): AutoRunRuleDto[] => [
  {
    pattern: ".claude/settings.json",
    action: "refuse",
    program: "Claude Code",
    consequence: "Claude Code runs the hooks this file names without asking you",
  },
  {
    pattern: ".vscode/tasks.json",
    action: "ask",
    program: "VS Code",
    consequence: "VS Code runs tasks marked runOn folderOpen when you open the folder",
  },
  {
    pattern: ".mcp.json",
    action: "ask",
    program: "Claude Code, VS Code",
    consequence: "Claude Code and VS Code's agent offer to start the MCP servers in this file",
  },
];

export const allowRule = (over: Partial<AllowRuleDto> = {}): AllowRuleDto => ({
  id: 7,
  command: "cargo test",
  createdMs: Date.now(),
  addedFrom: null,
  askedBy: null,
  ...over,
});

/** What `check_port` answers on a machine where only this Sluice (on 7457) listens. */
export const portCheck = (port: number): PortCheck =>
  port === 7457
    ? { port, status: "this-sluice", message: `Port ${port} is served by this Sluice: its MCP endpoint listens there.` }
    : { port, status: "free", message: `Port ${port} is free.` };

export const job = (over: Partial<JobDto> = {}): JobDto => ({
  id: "job_aaaaaaaaaaaaaaaa",
  projectId: "proj_aaaaaaaaaaaaaaaa",
  projectName: "my-app",
  command: "cargo test --all",
  state: "running",
  exitCode: null,
  signal: null,
  error: null,
  startedMs: 1_700_000_000_000,
  runtimeMs: 83_000,
  stdoutBytes: 120,
  stderrBytes: 0,
  droppedBytes: 0,
  cpuPercent: 87.5,
  memoryBytes: 350 * 1024 * 1024,
  processes: 3,
  confinement: "Landlock: fully enforced",
  interactive: null,
  ports: [],
  ...over,
});

export const client = (over: Partial<ClientDto> = {}): ClientDto => ({
  client: "cursor",
  title: "Cursor",
  hasConfig: true,
  configPath: "/home/me/.cursor/mcp.json",
  configFound: true,
  connected: false,
  problem: null,
  transport: "http",
  plainText: true,
  storage: "The token is stored in plain text in the client's file",
  reloadHint: "Refresh the MCP list in the client's settings, or restart it.",
  ...over,
});

export const preview = (over: Partial<ConfigPreview> = {}): ConfigPreview => ({
  id: "cfg_aaaaaaaaaaaaaaaa",
  client: "cursor",
  title: "Cursor",
  path: "/home/me/.cursor/mcp.json",
  fileExists: true,
  diff:
    "--- /home/me/.cursor/mcp.json\n+++ /home/me/.cursor/mcp.json\n@@ -1,3 +1,9 @@\n {\n   \"mcpServers\": {\n-    \"github\": {}\n+    \"github\": {},\n+    \"sluice\": {\n+      \"url\": \"http://127.0.0.1:7457/mcp\"\n+    }\n",
  noop: false,
  plainText: true,
  storage: "The token is stored in plain text in the client's file",
  note: null,
  expiresMs: Date.now() + 300_000,
  ...over,
});

export const health = (over: Partial<ClientHealthDto> = {}): ClientHealthDto => ({
  client: "cursor",
  title: "Cursor",
  configPath: "/home/me/.cursor/mcp.json",
  state: "working",
  code: "working",
  reason: "list_projects answered, 1 project(s) visible",
  transport: "http",
  tokenLocation: "in plain text in the client's file",
  repairable: false,
  ...over,
});

export const repairResult = (over: Partial<RepairResult> = {}): RepairResult => ({
  client: "cursor",
  title: "Cursor",
  path: "/home/me/.cursor/mcp.json",
  backup: "/home/me/.cursor/mcp.json.bak-20261130T090000Z",
  tokenLabel: null,
  note: "The token already in the entry still works and is kept.",
  health: health(),
  reloadHint: "Refresh the MCP list in the client's settings, or restart it.",
  ...over,
});

export const connectResult = (over: Partial<ConnectResult> = {}): ConnectResult => ({
  client: "cursor",
  title: "Cursor",
  path: "/home/me/.cursor/mcp.json",
  backup: "/home/me/.cursor/mcp.json.bak-20261130T090000Z",
  tokenLabel: "Cursor (sluice connect)",
  secret: null,
  secretHint: null,
  plainText: true,
  check: { ok: true, message: "list_projects answered, 1 project(s) visible" },
  reloadHint: "Refresh the MCP list in the client's settings, or restart it.",
  ...over,
});

/** Reach from the web, off (the default). */
export const reachOff = (): ReachStateDto => ({ setting: null, requests: [], remoteTokens: 0 });

/** A hosted assistant asking to connect, waiting for ten minutes from now. */
export const connectionRequest = (over: Partial<ConnectionRequestDto> = {}): ConnectionRequestDto => ({
  id: "slrq_aaaaaaaaaaaaaaaa",
  clientName: "Claude",
  verifiedHost: null,
  redirectHost: "claude.ai",
  code: "ABCD-EFGH",
  createdMs: Date.now(),
  expiresMs: Date.now() + 600_000,
  tampered: false,
  ...over,
});

/** Reach from the web, on for my-app, read-only. */
export const reachOn = (over: Partial<ReachStateDto> = {}): ReachStateDto => ({
  setting: {
    publicUrl: "https://sluice.example.com",
    connectorUrl: "https://sluice.example.com/mcp",
    tunnel: null,
    givenUrl: "https://sluice.example.com",
    port: 7879,
    projects: [{ id: "proj_aaaaaaaaaaaaaaaa", name: "my-app" }],
    write: false,
    redirects: [],
  },
  requests: [],
  remoteTokens: 0,
  ...over,
});

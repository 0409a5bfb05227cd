// Generated from crates/sluice-ipc by `UPDATE_BINDINGS=1 cargo test -p sluice-ipc`.
// Do not edit by hand: a test fails when this file is stale.

export type IpcError = { code: string, message: string, };

export type Access = "read-only" | "read-write";

export type Exec = "off" | "safe" | "project" | "any";

export type SecretInfo = { 
/**
 * Whether the install secret lives in the OS keychain.
 */
inKeychain: boolean, 
/**
 * The keychain's name, or the fallback file's path.
 */
location: string, 
/**
 * Why the keychain is not used, when it is not.
 */
reason: string | null, };

export type AppState = { paused: boolean, emergencyStopAvailable: boolean, port: number, mcpUrl: string, dataDir: string, secret: SecretInfo, version: string, };

export type ProjectStatus = "available" | "disabled" | "root-lost";

export type ApprovalPolicy = { 
/**
 * Deleting files, or moving them away from their path. Default: ask.
 */
askDeletes: boolean, 
/**
 * Creating or changing files. Default: allow.
 */
askWrites: boolean, };

export type ProjectDto = { id: string, name: string, 
/**
 * The folder on this computer (shown to the local user only; never sent to AI clients).
 */
root: string, access: Access, exec: Exec, status: ProjectStatus, reason: string | null, 
/**
 * The project's own sensitive-file patterns; `null` means the defaults apply.
 */
shield: Array<string> | null, 
/**
 * Which changes ask the user first.
 */
policy: ApprovalPolicy, createdMs: number, };

export type SetPolicy = { id: string, 
/**
 * `null` keeps the current setting.
 */
askDeletes: boolean | null, askWrites: boolean | null, };

export type AddProject = { 
/**
 * The folder's absolute path (from the picker or typed).
 */
path: string, 
/**
 * Display name; the folder's name when empty.
 */
name: string | null, access: Access, exec: Exec, };

export type SetModes = { id: string, access: Access | null, exec: Exec | null, };

export type ScopeEntry = { id: string, 
/**
 * The project's name, or `null` when the project was removed since.
 */
name: string | null, };

export type TokenDto = { id: string, label: string, 
/**
 * `null`: every project.
 */
scope: Array<ScopeEntry> | null, createdMs: number, lastUsedMs: number | null, expiresMs: number | null, revokedMs: number | null, };

export type CreateToken = { label: string, 
/**
 * Project ids or names; `null` for every project.
 */
scope: Array<string> | null, 
/**
 * `null`: never expires.
 */
expiresInDays: number | null, };

export type ClientSnippetDto = { client: string, title: string, target: string, text: string, holdsToken: boolean, };

export type CreatedToken = { token: TokenDto, secret: string, snippets: Array<ClientSnippetDto>, };

export type Outcome = "ok" | "denied" | "error";

export type AuditQuery = { 
/**
 * A project id or name.
 */
project: string | null, 
/**
 * A token id.
 */
token: string | null, 
/**
 * A tool or action name, matched exactly.
 */
action: string | null, outcome: Outcome | null, limit: number, 
/**
 * Entries older than this sequence number (paging back).
 */
beforeSeq: number | null, };

export type AuditEntryDto = { seq: number, timeMs: number, 
/**
 * The token's label, or "local user".
 */
actor: string, byAssistant: boolean, tokenId: string | null, action: string, projectId: string | null, projectName: string | null, outcome: Outcome, errorCode: string | null, durationMs: number | null, };

export type AuditPage = { entries: Array<AuditEntryDto>, };

export type ChainStatus = { entries: number, intact: boolean, 
/**
 * The first entry that does not verify.
 */
breakAt: number | null, breakReason: string | null, };

export type ApprovalStatus = "pending" | "approved" | "denied" | "expired" | "withdrawn" | "aborted";

export type ApprovalDto = { id: string, projectId: string, projectName: string, tokenId: string, 
/**
 * Who asks: the label of the assistant's token.
 */
tokenLabel: string, 
/**
 * The MCP tool (`delete_path`, `write_file`, …).
 */
tool: string, 
/**
 * The exact action, one line per effect (paths, sizes, whether it can be undone); never
 * shortened. Deceptive characters already appear as `⟨U+202E⟩`.
 */
summary: string, createdMs: number, expiresMs: number, status: ApprovalStatus, 
/**
 * The user's reason, for a denial that gave one.
 */
reason: string | null, decidedMs: number | null, 
/**
 * Who or what ended it: "local user (window)", "local user (tray)", "local user" (the
 * CLI), "expiry", the assistant's label (withdrawn), …
 */
decidedBy: string | null, };

export type Verdict = "approve" | "deny";

export type UiEvent = { "kind": "projectsChanged" } | { "kind": "tokensChanged" } | { "kind": "accessChanged", paused: boolean, } | { "kind": "projectRootLost", id: string, reason: string, } | { "kind": "approvalRequested", id: string, } | { "kind": "approvalDecided", id: string, state: string, } | { "kind": "openView", view: string, };

export const EVENT_CHANNEL = "engine-event";

export type Commands = {
  app_state: { args: Record<string, never>; result: AppState };
  set_paused: { args: { paused: boolean }; result: AppState };
  list_projects: { args: Record<string, never>; result: ProjectDto[] };
  add_project: { args: { args: AddProject }; result: ProjectDto };
  set_project_modes: { args: { args: SetModes }; result: ProjectDto };
  set_project_enabled: { args: { id: string; enabled: boolean }; result: ProjectDto };
  remove_project: { args: { id: string }; result: ProjectDto };
  set_shield: { args: { id: string; patterns: string[] | null }; result: ProjectDto };
  default_shield: { args: Record<string, never>; result: string[] };
  list_tokens: { args: Record<string, never>; result: TokenDto[] };
  create_token: { args: { args: CreateToken }; result: CreatedToken };
  revoke_token: { args: { id: string }; result: TokenDto };
  audit: { args: { query: AuditQuery }; result: AuditPage };
  verify_audit: { args: Record<string, never>; result: ChainStatus };
  set_project_policy: { args: { args: SetPolicy }; result: ProjectDto };
  list_approvals: { args: Record<string, never>; result: ApprovalDto[] };
  decide_approval: { args: { id: string; verdict: Verdict; reason: string | null }; result: ApprovalDto };
};

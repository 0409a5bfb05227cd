// Generated from crates/sluice-ipc by `UPDATE_BINDINGS=1 cargo test -p sluice-ipc`.
// Do not edit by hand: a test fails when this file is stale.

export type ErrorCode = "invalid_argument" | "path_invalid" | "path_outside_project" | "path_shielded" | "not_found" | "wrong_kind" | "too_large" | "binary_file" | "image_too_large" | "image_invalid" | "text_file" | "project_not_found" | "project_unavailable" | "read_only_project" | "outside_profile" | "not_a_git_repository" | "git_failed" | "unauthorized" | "rate_limited" | "paused" | "stopped" | "limit_exceeded" | "conflict" | "hook_failed" | "not_interactive" | "job_ended" | "cannot_publish" | "port_not_published" | "forbidden" | "denied" | "approval_expired" | "cancelled" | "language_server_missing" | "language_server_failed" | "confinement_unavailable" | "no_config_file" | "config_unparseable" | "config_unsafe_edit" | "config_changed" | "not_configured" | "preview_not_found" | "preview_expired" | "sluice_binary_missing" | "secret_store" | "io" | "internal";

export type HealthState = "not_installed" | "not_configured" | "working" | "unverified" | "broken" | "not_running";

export type HealthCode = "not_installed" | "not_configured" | "working" | "unverified" | "broken" | "not_running" | "port_changed" | "token_rejected" | "binary_missing" | "other_binary" | "connection_token_missing" | "config_invalid" | "config_unreadable" | "no_token" | "not_sluice" | "check_failed" | "token_kept_by_client";

export type FindingCode = "project-seal" | "allow-rule-seal" | "token-seal" | "stop-seal" | "pause-seal" | "audit-head-seal" | "audit-reset" | "seal-marker" | "seal-reset" | "reach-seal" | "connection-request-seal" | "grant-seal";

export type Profile = "review" | "edit" | "agent" | "full";

export const PROFILES: { profile: Profile; describe: string }[] = [{ profile: "review", describe: "list, read, search and read git history" }, { profile: "edit", describe: "review, and change files" }, { profile: "agent", describe: "edit, and run commands and jobs" }, { profile: "full", describe: "everything the project's modes allow" }];

export type IpcError = { 
/**
 * An [`sluice_core::ErrorCode`]'s wire form (a checked union in TypeScript).
 */
code: ErrorCode, message: string, };

export type Access = "read-only" | "read-write";

export type Exec = "off" | "safe" | "project" | "any";

export type Net = "off" | "registries" | "on";

export type RegistryDto = { host: string, serves: string | null, };

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

export type IntegrityFindingDto = { 
/**
 * A `sluice_store::FindingKind`'s wire form (a checked union in TypeScript).
 */
code: FindingCode, 
/**
 * The project's or token's id, the rule's number, or the record's key.
 */
subject: string, 
/**
 * What was found and what Sluice does about it, naming the project, rule or token.
 */
message: string, };

export type SandboxAccountState = "set-up" | "not-set-up" | "partial";

export type AppState = { 
/**
 * AI access is paused (also true while stopped: a stop pauses too).
 */
paused: boolean, 
/**
 * The emergency stop is on: every AI request is refused until the user resumes.
 */
stopped: boolean, port: number, mcpUrl: string, dataDir: string, secret: SecretInfo, version: string, 
/**
 * How commands are confined on this system (namespaces and Landlock), one sentence.
 */
confinement: string, 
/**
 * Commands get their own namespaces here (else the Landlock and seccomp fallback).
 */
namespaces: boolean, 
/**
 * What the sandbox promises, and whether each promise holds here.
 */
guarantees: Array<GuaranteeDto>, 
/**
 * The credential stores on this machine that no command can read (the home as `~`).
 */
hiddenFromJobs: Array<string>, 
/**
 * The hosts projects on the `registries` network reach.
 */
registries: Array<RegistryDto>, 
/**
 * Whether `registries` can be enforced here (it needs jobs in namespaces).
 */
registriesAvailable: boolean, 
/**
 * What in the database was changed outside Sluice (empty when every seal verifies).
 */
integrity: Array<IntegrityFindingDto>, 
/**
 * The Windows sandbox account's state; absent on other systems.
 */
sandboxAccount: SandboxAccountState | null, };

export type SandboxAccountSetup = { 
/**
 * The rules Windows refused, each with where and why.
 */
refused: Array<string>, 
/**
 * The state afterwards, its confinement sentence included.
 */
state: AppState, };

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

export type AutoRunActionDto = "ask" | "refuse";

export type AutoRunRuleDto = { 
/**
 * A glob with the shield's rules (no `/`: a name at any depth; `X/**` covers the folder).
 */
pattern: string, action: AutoRunActionDto, 
/**
 * Which program runs it ("VS Code", "direnv").
 */
program: string, 
/**
 * What happens when it changes, one line, shown on the approval.
 */
consequence: string, };

export type AutoRunHitDto = { path: string, program: string, 
/**
 * What happens, one line: "VS Code runs tasks marked runOn folderOpen when you open the
 * folder".
 */
consequence: string, };

export type SandboxSettingsDto = { 
/**
 * Hidden from commands beside the default credential stores.
 */
hide: Array<string>, 
/**
 * Default stores not hidden.
 */
unhide: Array<string>, 
/**
 * Stores commands may read (read-only).
 */
grants: Array<string>, 
/**
 * Host Unix sockets commands may connect to.
 */
sockets: Array<string>, 
/**
 * Commands refuse to run without every layer of confinement.
 */
requireFull: boolean, };

export type GuaranteeDto = { what: string, holds: boolean, };

export type SandboxPathDto = { path: string, 
/**
 * What it holds, for a default credential store.
 */
holds: string | null, 
/**
 * On the default list (else added by the user).
 */
default: boolean, 
/**
 * Exists on this machine.
 */
present: boolean, };

export type SandboxDto = { 
/**
 * Commands get their own namespaces (else the Landlock and seccomp fallback).
 */
namespaces: boolean, 
/**
 * Every layer holds here.
 */
full: boolean, summary: string, guarantees: Array<GuaranteeDto>, 
/**
 * What commands never read: the defaults the project keeps and its own additions.
 */
hidden: Array<SandboxPathDto>, unhidden: Array<SandboxPathDto>, grants: Array<SandboxPathDto>, sockets: Array<string>, 
/**
 * Shown beside every opted-in socket.
 */
socketWarning: string, requireFull: boolean, 
/**
 * Why the project's commands would be refused here, if they would.
 */
refusal: string | null, 
/**
 * The settings as stored, to edit.
 */
settings: SandboxSettingsDto, };

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
 * The project's own auto-run list; `null` means the defaults apply.
 */
autorun: Array<AutoRunRuleDto> | null, 
/**
 * Which changes ask the user first.
 */
policy: ApprovalPolicy, 
/**
 * The user's network setting for the project's commands; `null` follows the execution
 * mode's default.
 */
network: Net | null, 
/**
 * What the project's commands may reach now.
 */
networkMode: Net, 
/**
 * The sandbox its commands run in here: layers, guarantees, hidden stores, grants.
 */
sandbox: SandboxDto, 
/**
 * Whether git_log and git_show give assistants the authors' e-mail addresses (default:
 * hidden, names only).
 */
showGitEmails: boolean, 
/**
 * Whether `git_commit` runs the repository's hooks, each as a job in the project's sandbox
 * (default: off, no hook runs).
 */
runGitHooks: boolean, 
/**
 * The id of the project this one is a linked git worktree of (made by `git_worktree`;
 * removing it removes its clean worktree and keeps the branch).
 */
worktreeOf: string | null, createdMs: number, };

export type CheckpointDto = { id: string, name: string | null, 
/**
 * When it was taken (RFC 3339, UTC).
 */
created: string, files: number, bytes: number, 
/**
 * What it added to the store (contents no earlier checkpoint held).
 */
addedBytes: number, 
/**
 * Taken by Sluice before a command ran; that command.
 */
beforeCommand: string | null, jobId: string | null, };

export type CheckpointsDto = { checkpoints: Array<CheckpointDto>, 
/**
 * Bytes all of them take in Sluice's data folder (each content stored once).
 */
storedBytes: number, maxCheckpoints: number, maxBytes: number, };

export type RestoredDto = { 
/**
 * `restore` undoes the restore by this id.
 */
operationId: string, 
/**
 * Files written back, deleted or given their mode again.
 */
files: number, };

export type SetPolicy = { id: string, 
/**
 * `null` keeps the current setting.
 */
askDeletes: boolean | null, askWrites: boolean | null, };

export type SetNetwork = { id: string, network: Net | null, };

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
scope: Array<ScopeEntry> | null, createdMs: number, lastUsedMs: number | null, expiresMs: number | null, revokedMs: number | null, 
/**
 * The limit the assistant put on this token itself (`drop_privileges`): `read-only` or
 * `paused`; `null` when none. Only the user lifts it (`restore_token`).
 */
selfLimit: string | null, selfLimitedMs: number | null, 
/**
 * Issued to a hosted assistant through reach from the web (OAuth), not created by the
 * user; turning reach off revokes it.
 */
remote: boolean, 
/**
 * The tools it is offered (`full` for tokens made before profiles existed).
 */
profile: Profile, };

export type CreateToken = { label: string, 
/**
 * Project ids or names; `null` for every project.
 */
scope: Array<string> | null, 
/**
 * `null`: never expires.
 */
expiresInDays: number | null, 
/**
 * The tools it offers; `null` is `review`, the safe start (as `sluice token create`).
 */
profile: Profile | null, };

export type ClientSnippetDto = { client: string, title: string, target: string, text: string, holdsToken: boolean, 
/**
 * A one-click install link (Cursor, VS Code, VS Code Insiders); never carries the token.
 */
link: string | null, 
/**
 * Exactly what the link installs (the server entry, as JSON), shown beside it.
 */
linkInstalls: string | null, 
/**
 * Whether the token lies in plain text in the client's file when set up this way.
 */
plainText: boolean, 
/**
 * Something to do besides pasting (set a variable, answer a prompt).
 */
note: string | null, };

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
actor: string, byAssistant: boolean, tokenId: string | null, action: string, projectId: string | null, projectName: string | null, outcome: Outcome, errorCode: string | null, durationMs: number | null, 
/**
 * A line Sluice wrote about the entry: for an approval, what would run on its own.
 */
detail: string | null, };

export type AuditPage = { entries: Array<AuditEntryDto>, };

export type ChainStatus = { entries: number, intact: boolean, 
/**
 * The first entry that does not verify.
 */
breakAt: number | null, breakReason: string | null, };

export type ApprovalStatus = "pending" | "approved" | "denied" | "expired" | "withdrawn" | "aborted";

export type CommandDto = { 
/**
 * The resolved program first, then every argument.
 */
argv: Array<string>, 
/**
 * The project-relative working folder; `""` is the project's root.
 */
cwd: string, 
/**
 * Environment additions, `NAME=value`.
 */
env: Array<string>, 
/**
 * What it may reach (the project's network setting for commands).
 */
network: Net, 
/**
 * How it is confined, one sentence (Landlock on Linux).
 */
confinement: string, 
/**
 * The project's sandbox it would run in (hidden stores, grants, sockets, guarantees).
 */
sandbox: SandboxDto | null, };

export type RiskLevel = "safe" | "caution" | "dangerous";

export type RiskDto = { 
/**
 * For commands: the execution policy's risk level. `null` for changes to files, which
 * have no such level (their class says what they destroy and whether it can be undone).
 */
level: RiskLevel | null, 
/**
 * A few words: "arbitrary program", "deletes 3 files (restorable)".
 */
class: string, 
/**
 * One line: why it is in that class.
 */
why: string, };

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
summary: string, 
/**
 * The paths the change touches that another program runs on its own, with what happens:
 * the reason it asks even where changes otherwise do not. Empty for most approvals.
 */
autorun: Array<AutoRunHitDto>, createdMs: number, expiresMs: number, status: ApprovalStatus, 
/**
 * The user's reason, for a denial that gave one.
 */
reason: string | null, decidedMs: number | null, 
/**
 * Who or what ended it: "local user (window)", "local user (tray)", "local user" (the
 * CLI), "expiry", the assistant's label (withdrawn), …
 */
decidedBy: string | null, 
/**
 * Whether "Always allow" is offered: a pending approval for a command, which becomes an
 * exact allow rule (argv, folder, environment) for its project.
 */
alwaysAllowable: boolean, 
/**
 * The exact command of a pending command approval, token by token.
 */
command: CommandDto | null, 
/**
 * How risky the action is and why, when Sluice can say: a pending command, or a change
 * to files.
 */
risk: RiskDto | null, };

export type Verdict = "approve" | "approve-always" | "deny";

export type Channel = "window" | "tray" | "cli";

export type AllowRuleDto = { id: number, 
/**
 * The command line, with its folder and environment when it has them; deceptive
 * characters already appear as `⟨U+202E⟩`.
 */
command: string, createdMs: number, 
/**
 * Where the user chose "Always allow"; `null` for rules made before Sluice recorded it.
 */
addedFrom: Channel | null, 
/**
 * The label of the assistant's token that asked for the command, as it was then; `null`
 * for rules made before Sluice recorded it. Deceptive characters appear as `⟨U+202E⟩`.
 */
askedBy: string | null, };

export type PortStatus = "free" | "in-use" | "this-sluice" | "unavailable";

export type PortCheck = { port: number, status: PortStatus, 
/**
 * One sentence to show.
 */
message: string, };

export type JobStateDto = "queued" | "running" | "succeeded" | "failed" | "cancelled" | "timed-out";

export type JobDto = { id: string, projectId: string, 
/**
 * `null` when the project was removed since.
 */
projectName: string | null, command: string, state: JobStateDto, exitCode: number | null, signal: number | null, 
/**
 * Why it could not start or run, when it could not.
 */
error: string | null, 
/**
 * When it started running, in Unix milliseconds; `null` while queued or when it never ran.
 */
startedMs: number | null, 
/**
 * How long it has run (so far, for a running job); `null` while queued.
 */
runtimeMs: number | null, stdoutBytes: number, stderrBytes: number, 
/**
 * Older output the bounded log no longer holds.
 */
droppedBytes: number, 
/**
 * The whole process tree's CPU use at the last sample (100 = one core).
 */
cpuPercent: number | null, memoryBytes: number | null, processes: number | null, 
/**
 * How the job is confined (Landlock), one sentence.
 */
confinement: string | null, 
/**
 * `terminal` or `pipe` when the assistant that started it can type into it.
 */
interactive: string | null, 
/**
 * Ports its server published, while it runs: each opens in the browser.
 */
ports: Array<JobPortDto>, };

export type JobPortDto = { port: number, url: string, };

export type LogStream = "stdout" | "stderr";

export type JobLogsQuery = { id: string, stream: LogStream, 
/**
 * 0 for the start, or the previous page's `nextCursor`.
 */
cursor: number, 
/**
 * At most this many bytes (capped at 64 KiB).
 */
maxBytes: number, };

export type JobLogPage = { text: string, 
/**
 * Where this page starts (past the requested cursor when older output was dropped).
 */
cursor: number, nextCursor: number, 
/**
 * Bytes between the requested cursor and `cursor` that the log no longer holds.
 */
droppedBytes: number, 
/**
 * Everything written so far has been read.
 */
atEnd: boolean, 
/**
 * The job's state when the page was read: final and `atEnd` means nothing more comes.
 */
state: JobStateDto, };

export type StopResult = { state: AppState, killedJobs: number, cancelledQueued: number, deniedApprovals: number, };

export type ClientDto = { 
/**
 * Stable id (`cursor`, `claude-desktop`, …).
 */
client: string, title: string, 
/**
 * Whether Sluice can write this client's config (false for the generic entries, which
 * only have a snippet to copy).
 */
hasConfig: boolean, 
/**
 * The file Connect writes on this computer, when the client has one.
 */
configPath: string | null, 
/**
 * Whether that file exists now (Connect creates it otherwise).
 */
configFound: boolean, 
/**
 * Whether the file holds Sluice's entry.
 */
connected: boolean, 
/**
 * Why the file cannot be used (e.g. it does not parse); Connect is refused then.
 */
problem: string | null, 
/**
 * `http` or `stdio`: how the client will reach Sluice.
 */
transport: string, 
/**
 * Whether connecting leaves the token in plain text in the client's file.
 */
plainText: boolean, 
/**
 * Where the token ends up, one sentence.
 */
storage: string, 
/**
 * What to do after connecting (restart, refresh).
 */
reloadHint: string, };

export type ConfigPreview = { 
/**
 * Pass to `connect_apply` / `disconnect_apply`; valid once, until `expiresMs`.
 */
id: string, client: string, title: string, 
/**
 * The file that would be written.
 */
path: string, 
/**
 * Whether the file exists now (else it is created).
 */
fileExists: boolean, 
/**
 * The change as unified-diff text (the token appears as a placeholder).
 */
diff: string, 
/**
 * Nothing would change (e.g. Sluice is not in the file).
 */
noop: boolean, 
/**
 * Whether the token would be stored in plain text in that file (connect only).
 */
plainText: boolean, 
/**
 * Where the token ends up, one sentence (connect only).
 */
storage: string | null, 
/**
 * What a repair does with the token (kept, or a new one and why); never the token.
 */
note: string | null, expiresMs: number, };

export type CheckResult = { ok: boolean, 
/**
 * "list_projects answered, 1 project(s) visible", or why it failed.
 */
message: string, };

export type ConnectResult = { client: string, title: string, path: string, 
/**
 * The copy of the previous file, next to it (`null` when there was none).
 */
backup: string | null, 
/**
 * The label of the token created for the client.
 */
tokenLabel: string | null, 
/**
 * The token, only for clients that need it pasted or set once (VS Code asks for it,
 * Codex reads an environment variable); shown once, never stored by the window.
 */
secret: string | null, 
/**
 * What to do with `secret`, when there is one.
 */
secretHint: string | null, plainText: boolean, check: CheckResult, reloadHint: string, };

export type DisconnectResult = { client: string, title: string, path: string, 
/**
 * Whether Sluice's entry was removed (false: it was not there).
 */
removed: boolean, backup: string | null, 
/**
 * Whether a token kept for `sluice stdio` was forgotten.
 */
forgotStoredToken: boolean, };

export type ClientHealthDto = { client: string, title: string, 
/**
 * The config file looked at.
 */
configPath: string | null, 
/**
 * A `clients_health::HealthState`'s wire form (a checked union in TypeScript).
 */
state: HealthState, 
/**
 * A `clients_health::HealthCode`'s wire form: the state, or why it is broken.
 */
code: HealthCode, 
/**
 * What was found, in words.
 */
reason: string, 
/**
 * `http` or `stdio`, when there is an entry.
 */
transport: string | null, 
/**
 * Where the entry's token is ("in plain text in the client's file"), when there is one.
 */
tokenLocation: string | null, 
/**
 * Whether `repair_preview` can fix it.
 */
repairable: boolean, };

export type RepairResult = { client: string, title: string, path: string, backup: string | null, 
/**
 * The label of the token created by the repair, if one was.
 */
tokenLabel: string | null, 
/**
 * What happened to the token, in words.
 */
note: string, 
/**
 * The health check made right after writing.
 */
health: ClientHealthDto, reloadHint: string, };

export type TunnelChoiceDto = { 
/**
 * Checked by the engine, which names the kinds in its refusal of any other.
 */
kind: "cloudflared" | "cloudflared-named" | "tailscale" | "ngrok" | "command" | "openai", 
/**
 * A named Cloudflare tunnel's name (`cloudflared tunnel run NAME`), or the ID of OpenAI's
 * Secure MCP Tunnel (`tunnel_…`); only with those kinds.
 */
name: string | null, 
/**
 * The program and its arguments, split like a shell would (no shell runs it); `{port}`
 * stands for the tunnel port. Only with `command`.
 */
command: string | null, };

export type TunnelDto = { 
/**
 * What it is, for a sentence: `a Cloudflare quick tunnel`, `Tailscale Funnel`…
 */
name: string, 
/**
 * `starting`, `running`, `restarting` or `failed`; `null` until the tray or `sluice serve`
 * starts it.
 */
state: string | null, restarts: number, 
/**
 * Its last line of output, or why it could not start (redacted, made visible).
 */
message: string | null, 
/**
 * What the user picked, to fill in a change (`command` is `null` when it holds
 * characters that would show as something else: the user types it again).
 */
choice: TunnelChoiceDto, };

export type ReachSettingDto = { 
/**
 * `https://host[:port]`: the tunnel's public address; `null` until the tunnel Sluice runs
 * announced it.
 */
publicUrl: string | null, 
/**
 * The address to give the hosted assistant: `<publicUrl>/mcp`; `null` with `publicUrl`.
 */
connectorUrl: string | null, 
/**
 * The tunnel Sluice runs; `null` when the user runs their own.
 */
tunnel: TunnelDto | null, 
/**
 * The public URL as the user gave it, to fill in a change; `null` when the tunnel
 * announces its own.
 */
givenUrl: string | null, 
/**
 * The port on 127.0.0.1 the tunnel forwards to.
 */
port: number, 
/**
 * The projects a remote token sees, by id and name (`null`: removed since).
 */
projects: Array<ScopeEntry>, 
/**
 * Remote tokens may change files (else they only read).
 */
write: boolean, 
/**
 * Redirect URIs allowed beside ChatGPT's and Claude's published callbacks.
 */
redirects: Array<string>, };

export type ConnectionRequestDto = { id: string, 
/**
 * The name the client's metadata document gives when `verified_host` is set; otherwise
 * only what the client registered itself as, which nothing checked (show it as unverified).
 */
clientName: string, 
/**
 * The host of the metadata document Sluice fetched for this client: the one thing about
 * its identity that is verified. `None` for a client that registered itself.
 */
verifiedHost: string | null, 
/**
 * Where the browser returns after the decision (`claude.ai`).
 */
redirectHost: string, 
/**
 * The code the consent page shows (`ABCD-EFGH`): approve only the request whose code the
 * user's own browser shows.
 */
code: string, createdMs: number, expiresMs: number, 
/**
 * Changed in the database outside Sluice: it cannot be approved.
 */
tampered: boolean, };

export type ReachStateDto = { 
/**
 * `null` while reach is off (the default).
 */
setting: ReachSettingDto | null, 
/**
 * Connection requests waiting for the user, oldest first; empty while reach is off.
 */
requests: Array<ConnectionRequestDto>, 
/**
 * Tokens issued to hosted assistants that are not revoked (turning reach off revokes
 * them all).
 */
remoteTokens: number, };

export type ReachOn = { 
/**
 * `https://host[:port]`, without a path, query or fragment. Required for a tunnel the user
 * runs and a named Cloudflare tunnel; `null` when the tunnel announces its own (a quick
 * tunnel, Tailscale, ngrok without a reserved domain, a command that prints it).
 */
url: string | null, 
/**
 * A tunnel for Sluice to start, watch and stop with reach; `null`: the user runs their own.
 */
tunnel: TunnelChoiceDto | null, 
/**
 * Project ids or names; at least one.
 */
projects: Array<string>, 
/**
 * Let remote tokens change files and run what each project allows (never `any` mode).
 */
write: boolean, 
/**
 * The loopback port the tunnel forwards to; `null`: 7879.
 */
port: number | null, 
/**
 * Extra redirect URIs to accept, exactly; `null`: none.
 */
redirects: Array<string> | null, 
/**
 * The API key of OpenAI's Secure MCP Tunnel; `null` keeps the one Sluice has for it.
 */
apiKey?: string, };

export type UiEvent = { "kind": "projectsChanged" } | { "kind": "tokensChanged" } | { "kind": "accessChanged", paused: boolean, } | { "kind": "projectRootLost", id: string, reason: string, } | { "kind": "approvalRequested", id: string, } | { "kind": "approvalDecided", id: string, state: string, } | { "kind": "openView", view: string, } | { "kind": "jobChanged", id: string, state: JobStateDto, } | { "kind": "jobActivity", id: string, };

export const EVENT_CHANNEL = "engine-event";

export const VIEWS = ["projects", "tokens", "approvals", "jobs", "activity", "settings", "clients"] as const;

export const DEFAULT_REACH_PORT = 7879;

export type Commands = {
  app_state: { args: Record<string, never>; result: AppState };
  set_up_sandbox_account: { args: Record<string, never>; result: SandboxAccountSetup };
  set_paused: { args: { paused: boolean }; result: AppState };
  list_projects: { args: Record<string, never>; result: ProjectDto[] };
  add_project: { args: { args: AddProject }; result: ProjectDto };
  set_project_modes: { args: { args: SetModes }; result: ProjectDto };
  set_project_enabled: { args: { id: string; enabled: boolean }; result: ProjectDto };
  remove_project: { args: { id: string }; result: ProjectDto };
  set_shield: { args: { id: string; patterns: string[] | null }; result: ProjectDto };
  default_shield: { args: Record<string, never>; result: string[] };
  set_autorun: { args: { id: string; rules: AutoRunRuleDto[] | null }; result: ProjectDto };
  default_autorun: { args: Record<string, never>; result: AutoRunRuleDto[] };
  set_sandbox: { args: { id: string; settings: SandboxSettingsDto }; result: ProjectDto };
  list_tokens: { args: Record<string, never>; result: TokenDto[] };
  create_token: { args: { args: CreateToken }; result: CreatedToken };
  revoke_token: { args: { id: string }; result: TokenDto };
  restore_token: { args: { id: string }; result: TokenDto };
  set_token_profile: { args: { id: string; profile: Profile }; result: TokenDto };
  audit: { args: { query: AuditQuery }; result: AuditPage };
  verify_audit: { args: Record<string, never>; result: ChainStatus };
  set_project_policy: { args: { args: SetPolicy }; result: ProjectDto };
  list_approvals: { args: Record<string, never>; result: ApprovalDto[] };
  decide_approval: { args: { id: string; verdict: Verdict; reason: string | null }; result: ApprovalDto };
  list_jobs: { args: Record<string, never>; result: JobDto[] };
  job_logs: { args: { query: JobLogsQuery }; result: JobLogPage };
  cancel_job: { args: { id: string }; result: JobDto };
  open_job_port: { args: { id: string; port: number }; result: null };
  emergency_stop: { args: Record<string, never>; result: StopResult };
  set_project_network: { args: { args: SetNetwork }; result: ProjectDto };
  set_project_git_emails: { args: { id: string; show: boolean }; result: ProjectDto };
  set_project_git_hooks: { args: { id: string; run: boolean }; result: ProjectDto };
  list_checkpoints: { args: { project: string }; result: CheckpointsDto };
  create_checkpoint: { args: { project: string; name: string | null }; result: CheckpointDto };
  restore_checkpoint: { args: { project: string; id: string }; result: RestoredDto };
  set_registries: { args: { hosts: string[] | null }; result: RegistryDto[] };
  list_clients: { args: Record<string, never>; result: ClientDto[] };
  connect_preview: { args: { client: string }; result: ConfigPreview };
  connect_apply: { args: { id: string }; result: ConnectResult };
  disconnect_preview: { args: { client: string }; result: ConfigPreview };
  disconnect_apply: { args: { id: string }; result: DisconnectResult };
  client_health: { args: Record<string, never>; result: ClientHealthDto[] };
  repair_preview: { args: { client: string }; result: ConfigPreview };
  repair_apply: { args: { id: string }; result: RepairResult };
  list_allow_rules: { args: { project: string }; result: AllowRuleDto[] };
  remove_allow_rule: { args: { project: string; id: number }; result: AllowRuleDto[] };
  reach_state: { args: Record<string, never>; result: ReachStateDto };
  reach_on: { args: { args: ReachOn }; result: ReachStateDto };
  reach_off: { args: Record<string, never>; result: number };
  reach_decide: { args: { id: string; approve: boolean }; result: ReachStateDto };
  copy_secret: { args: { text: string }; result: null };
  check_port: { args: { port: number }; result: PortCheck };
  window_shown: { args: { view: string }; result: null };
};

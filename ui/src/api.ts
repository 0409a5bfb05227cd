// The one module that talks to Rust: typed commands (from ./bindings/ipc.ts, generated from
// crates/sluice-ipc), the engine's events, the native folder picker and the clipboard.
// Components call `api`, never `invoke` or `listen`; tests mock this module.

import { invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import { open } from "@tauri-apps/plugin-dialog";
import { EVENT_CHANNEL } from "./bindings/ipc";
import type {
  AddProject,
  AuditQuery,
  AutoRunRuleDto,
  Commands,
  CreateToken,
  ErrorCode,
  IpcError,
  JobLogsQuery,
  Profile,
  ReachOn,
  SandboxSettingsDto,
  SetModes,
  SetNetwork,
  SetPolicy,
  UiEvent,
  Verdict,
} from "./bindings/ipc";

/** A refusal from Sluice: branch on `code`, show `message`. */
export class ApiError extends Error implements IpcError {
  code: ErrorCode;
  constructor(e: IpcError) {
    super(e.message);
    this.code = e.code;
  }
}

function toApiError(e: unknown): ApiError {
  if (e && typeof e === "object" && "code" in e && "message" in e) {
    // The shell passes the engine's IpcError through as it is: its code is an ErrorCode.
    return new ApiError({ code: String(e.code) as ErrorCode, message: String(e.message) });
  }
  return new ApiError({ code: "internal", message: String(e) });
}

async function call<K extends keyof Commands>(
  cmd: K,
  args: Commands[K]["args"],
): Promise<Commands[K]["result"]> {
  try {
    return await invoke<Commands[K]["result"]>(cmd, args);
  } catch (e) {
    throw toApiError(e);
  }
}

/** How long a copied token stays on the clipboard. */
export const CLIPBOARD_CLEAR_MS = 60_000;

async function writeClipboard(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) {
    try {
      await navigator.clipboard.writeText(text);
      return;
    } catch {
      // Fall back below (WebKit without clipboard permission).
    }
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  document.execCommand("copy");
  area.remove();
}

let clearTimer: ReturnType<typeof setTimeout> | undefined;

export const api = {
  appState: () => call("app_state", {}),
  setPaused: (paused: boolean) => call("set_paused", { paused }),
  listProjects: () => call("list_projects", {}),
  addProject: (args: AddProject) => call("add_project", { args }),
  setProjectModes: (args: SetModes) => call("set_project_modes", { args }),
  setProjectEnabled: (id: string, enabled: boolean) =>
    call("set_project_enabled", { id, enabled }),
  removeProject: (id: string) => call("remove_project", { id }),
  setShield: (id: string, patterns: string[] | null) => call("set_shield", { id, patterns }),
  defaultShield: () => call("default_shield", {}),
  /** Replaces a project's auto-run list (`null`: the defaults); guarding less asks natively. */
  setAutorun: (id: string, rules: AutoRunRuleDto[] | null) => call("set_autorun", { id, rules }),
  defaultAutorun: () => call("default_autorun", {}),
  /** Replaces a project's sandbox settings; granting a store, un-hiding one, opting in to a
   * socket or lifting the requirement of full confinement asks natively first. */
  setSandbox: (id: string, settings: SandboxSettingsDto) => call("set_sandbox", { id, settings }),
  listTokens: () => call("list_tokens", {}),
  createToken: (args: CreateToken) => call("create_token", { args }),
  revokeToken: (id: string) => call("revoke_token", { id }),
  restoreToken: (id: string) => call("restore_token", { id }),
  /** Sets a token's profile; widening it asks natively first, narrowing does not. */
  setTokenProfile: (id: string, profile: Profile) => call("set_token_profile", { id, profile }),
  audit: (query: AuditQuery) => call("audit", { query }),
  verifyAudit: () => call("verify_audit", {}),
  setProjectPolicy: (args: SetPolicy) => call("set_project_policy", { args }),
  listApprovals: () => call("list_approvals", {}),
  /** The exact commands a project runs without asking ("Always allow this command"). */
  listAllowRules: (project: string) => call("list_allow_rules", { project }),
  /** Removes one: that command asks again. Returns the project's remaining rules. */
  removeAllowRule: (project: string, id: number) => call("remove_allow_rule", { project, id }),
  decideApproval: (id: string, verdict: Verdict, reason: string | null) =>
    call("decide_approval", { id, verdict, reason }),
  listJobs: () => call("list_jobs", {}),
  jobLogs: (query: JobLogsQuery) => call("job_logs", { query }),
  cancelJob: (id: string) => call("cancel_job", { id }),
  /** Opens a port the job publishes in the user's browser (the engine builds the link). */
  openJobPort: (id: string, port: number) => call("open_job_port", { id, port }),
  /** Windows: sets up (or repairs) the sandbox account jobs run as; Windows asks for an
   * administrator's consent (UAC). Elsewhere a refusal that changes nothing. */
  setUpSandboxAccount: () => call("set_up_sandbox_account", {}),
  /** Kills every job, denies every waiting approval, refuses AI requests until resumed. */
  emergencyStop: () => call("emergency_stop", {}),
  /** On, off, or `null` for the mode's default; turning it on asks in a native dialog. */
  setProjectNetwork: (args: SetNetwork) => call("set_project_network", { args }),
  /** Whether git_log and git_show give assistants the authors' e-mail addresses; showing them
   * asks natively first. */
  setProjectGitEmails: (id: string, show: boolean) =>
    call("set_project_git_emails", { id, show }),
  /** Whether a project's commits run its git hooks, each as a job in its sandbox; turning
   * them on is confirmed natively by the shell first. */
  setProjectGitHooks: (id: string, run: boolean) => call("set_project_git_hooks", { id, run }),
  /** A project's checkpoints, newest first, and the space they take. */
  listCheckpoints: (project: string) => call("list_checkpoints", { project }),
  createCheckpoint: (project: string, name: string | null) =>
    call("create_checkpoint", { project, name }),
  /** Puts the project's files back as the checkpoint holds them; asks natively first. */
  restoreCheckpoint: (project: string, id: string) => call("restore_checkpoint", { project, id }),
  /** The hosts of the "registries" network (`null`: the defaults); adding one asks natively. */
  setRegistries: (hosts: string[] | null) => call("set_registries", { hosts }),
  /** The clients Sluice can connect, with whether each is connected. */
  listClients: () => call("list_clients", {}),
  /** The exact change connecting a client makes; nothing is written yet. */
  connectPreview: (client: string) => call("connect_preview", { client }),
  /** Writes exactly the previewed change and checks the connection. */
  connectApply: (id: string) => call("connect_apply", { id }),
  disconnectPreview: (client: string) => call("disconnect_preview", { client }),
  disconnectApply: (id: string) => call("disconnect_apply", { id }),
  /** Whether each client's Sluice entry still works: a real MCP call with its own token. */
  clientHealth: () => call("client_health", {}),
  /** The exact change repairing a client's entry makes (only Sluice's entry); nothing written. */
  repairPreview: (client: string) => call("repair_preview", { client }),
  /** Writes exactly the previewed repair, then checks the client's health again. */
  repairApply: (id: string) => call("repair_apply", { id }),
  /** Whether a port on 127.0.0.1 is free, taken by another program, or this Sluice's own. */
  checkPort: (port: number) => call("check_port", { port }),
  /** Reach from the web: off, or what it exposes and who asks to connect. */
  reachState: () => call("reach_state", {}),
  /** Turns reach on (or changes it); what widens asks in a native dialog first. */
  reachOn: (args: ReachOn) => call("reach_on", { args }),
  /** Turns reach off; returns how many remote tokens it revoked. */
  reachOff: () => call("reach_off", {}),
  /** Approves (asking natively first) or denies a connection request. */
  reachDecide: (id: string, approve: boolean) => call("reach_decide", { id, approve }),
  /** Tells the tray the page has drawn `view` (logged; see `App`). */
  windowShown: (view: string) => call("window_shown", { view }),

  /** Whether Sluice starts when the user logs in (the autostart plugin). */
  startAtLogin: async (): Promise<boolean> => {
    try {
      return await invoke<boolean>("plugin:autostart|is_enabled");
    } catch (e) {
      throw toApiError(e);
    }
  },
  setStartAtLogin: async (on: boolean): Promise<void> => {
    try {
      await invoke(on ? "plugin:autostart|enable" : "plugin:autostart|disable");
    } catch (e) {
      throw toApiError(e);
    }
  },

  /** The native folder picker; `null` when the user cancels. */
  pickFolder: async (): Promise<string | null> => {
    const picked = await open({ directory: true, multiple: false, title: "Authorize a folder" });
    return typeof picked === "string" ? picked : null;
  },

  /** Engine events; returns the function that stops listening. */
  onEvent: async (handler: (e: UiEvent) => void): Promise<() => void> =>
    listen<UiEvent>(EVENT_CHANNEL, (e) => handler(e.payload)),

  /**
   * Copies text. A secret goes through the app, which takes it off the clipboard after a
   * minute unless something else was copied since (a page may not write to the clipboard
   * later, and the window may be closed by then); where the app does not do that, the page
   * copies it and clears it itself.
   */
  copy: async (text: string, secret: boolean): Promise<void> => {
    if (secret) {
      try {
        await call("copy_secret", { text });
        return;
      } catch {
        // Not handled by the app on this system: copy and clear here.
      }
    }
    await writeClipboard(text);
    if (secret) {
      clearTimeout(clearTimer);
      clearTimer = setTimeout(() => void writeClipboard(""), CLIPBOARD_CLEAR_MS);
    }
  },
};

export type Api = typeof api;

// The one mock of the IPC boundary: every function of `api` as a `vi.fn`, with answers for an
// empty, running Sluice. Test files mock the module with
//   vi.mock("./api", () => import("./test/api"))
// and steer it through `m` (the mocks) and `emit` (an engine event).

import { vi, type Mock } from "vitest";
import type { Api } from "../api";
import type { UiEvent } from "../bindings/ipc";
import { autorunDefaults, portCheck, reachOff, state } from "./fixtures";

export const CLIPBOARD_CLEAR_MS = 60_000;

export class ApiError extends Error {
  code: string;
  constructor(e: { code: string; message: string }) {
    super(e.message);
    this.code = e.code;
  }
}

type Mocked = { [K in keyof Api]: Mock<Api[K]> };

// Every key of the real `api` must be here: the type makes a missing one a compile error.
export const api: Mocked = {
  appState: vi.fn(),
  setUpSandboxAccount: vi.fn(),
  setPaused: vi.fn(),
  listProjects: vi.fn(),
  addProject: vi.fn(),
  setProjectModes: vi.fn(),
  setProjectEnabled: vi.fn(),
  removeProject: vi.fn(),
  setShield: vi.fn(),
  defaultShield: vi.fn(),
  setAutorun: vi.fn(),
  defaultAutorun: vi.fn(),
  setSandbox: vi.fn(),
  listTokens: vi.fn(),
  createToken: vi.fn(),
  revokeToken: vi.fn(),
  restoreToken: vi.fn(),
  setTokenProfile: vi.fn(),
  audit: vi.fn(),
  verifyAudit: vi.fn(),
  setProjectPolicy: vi.fn(),
  listApprovals: vi.fn(),
  listAllowRules: vi.fn(),
  removeAllowRule: vi.fn(),
  decideApproval: vi.fn(),
  listJobs: vi.fn(),
  jobLogs: vi.fn(),
  cancelJob: vi.fn(),
  openJobPort: vi.fn(),
  emergencyStop: vi.fn(),
  setProjectNetwork: vi.fn(),
  setProjectGitEmails: vi.fn(),
  setProjectGitHooks: vi.fn(),
  listCheckpoints: vi.fn(),
  createCheckpoint: vi.fn(),
  restoreCheckpoint: vi.fn(),
  setRegistries: vi.fn(),
  listClients: vi.fn(),
  connectPreview: vi.fn(),
  connectApply: vi.fn(),
  disconnectPreview: vi.fn(),
  disconnectApply: vi.fn(),
  clientHealth: vi.fn(),
  repairPreview: vi.fn(),
  repairApply: vi.fn(),
  checkPort: vi.fn(),
  reachState: vi.fn(),
  reachOn: vi.fn(),
  reachOff: vi.fn(),
  reachDecide: vi.fn(),
  windowShown: vi.fn(),
  startAtLogin: vi.fn(),
  setStartAtLogin: vi.fn(),
  pickFolder: vi.fn(),
  onEvent: vi.fn(),
  copy: vi.fn(),
};

/** The mocks, by the name tests know them under. */
export const m = api;

let handler: (e: UiEvent) => void = () => {};

/** Delivers an engine event to the window, as the shell would. */
export function emit(e: UiEvent): void {
  handler(e);
}

/** Clears every mock and answers as an empty Sluice with AI access on. */
export function resetApi(): void {
  vi.clearAllMocks();
  handler = () => {};
  m.appState.mockResolvedValue(state());
  m.listProjects.mockResolvedValue([]);
  m.listTokens.mockResolvedValue([]);
  m.listApprovals.mockResolvedValue([]);
  m.listAllowRules.mockResolvedValue([]);
  m.listCheckpoints.mockResolvedValue({
    checkpoints: [],
    storedBytes: 0,
    maxCheckpoints: 50,
    maxBytes: 2 * 1024 ** 3,
  });
  m.listJobs.mockResolvedValue([]);
  m.listClients.mockResolvedValue([]);
  m.clientHealth.mockResolvedValue([]);
  m.defaultShield.mockResolvedValue([".env", "*.pem"]);
  m.defaultAutorun.mockResolvedValue(autorunDefaults());
  m.audit.mockResolvedValue({ entries: [] });
  m.verifyAudit.mockResolvedValue({ entries: 0, intact: true, breakAt: null, breakReason: null });
  m.copy.mockResolvedValue();
  m.checkPort.mockImplementation(async (port) => portCheck(port));
  m.reachState.mockResolvedValue(reachOff());
  m.windowShown.mockResolvedValue(null);
  m.startAtLogin.mockResolvedValue(false);
  m.setStartAtLogin.mockResolvedValue();
  m.onEvent.mockImplementation(async (h) => {
    handler = h;
    return () => {};
  });
}

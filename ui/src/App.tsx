// The control-center window: sidebar, top bar with the access state, and one view at a time.
// Data comes from `api`; engine events say what to reload.

import { useCallback, useEffect, useState } from "react";
import { api } from "./api";
import type { ApprovalDto, AppState, ProjectDto, TokenDto } from "./bindings/ipc";
import { ErrorLine, errorMessage } from "./components";
import { ActivityView } from "./views/Activity";
import { ApprovalsView } from "./views/Approvals";
import { JobsView } from "./views/Empty";
import { FirstRun } from "./views/FirstRun";
import { ProjectsView } from "./views/Projects";
import { SettingsView } from "./views/Settings";
import { TokensView } from "./views/Tokens";

export const VIEWS = ["projects", "tokens", "approvals", "jobs", "activity", "settings"] as const;
export type View = (typeof VIEWS)[number];

const TITLES: Record<View, string> = {
  projects: "Projects",
  tokens: "Tokens",
  approvals: "Approvals",
  jobs: "Jobs",
  activity: "Activity",
  settings: "Settings",
};

export function App() {
  const [view, setView] = useState<View>("projects");
  const [state, setState] = useState<AppState | null>(null);
  const [projects, setProjects] = useState<ProjectDto[]>([]);
  const [tokens, setTokens] = useState<TokenDto[]>([]);
  const [approvals, setApprovals] = useState<ApprovalDto[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [authorizeOpen, setAuthorizeOpen] = useState(false);
  const [newTokenOpen, setNewTokenOpen] = useState(false);

  const guard = useCallback(async (f: () => Promise<void>) => {
    try {
      await f();
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    }
  }, []);
  const loadState = useCallback(() => guard(async () => setState(await api.appState())), [guard]);
  const loadProjects = useCallback(
    () => guard(async () => setProjects(await api.listProjects())),
    [guard],
  );
  const loadTokens = useCallback(() => guard(async () => setTokens(await api.listTokens())), [guard]);
  const loadApprovals = useCallback(
    () => guard(async () => setApprovals(await api.listApprovals())),
    [guard],
  );

  useEffect(() => {
    void loadState();
    void loadProjects();
    void loadTokens();
    void loadApprovals();
    let stop: (() => void) | undefined;
    let cancelled = false;
    void api
      .onEvent((e) => {
        switch (e.kind) {
          case "accessChanged":
            setState((s) => (s ? { ...s, paused: e.paused } : s));
            break;
          case "projectsChanged":
          case "projectRootLost":
            void loadProjects();
            break;
          case "tokensChanged":
            void loadTokens();
            break;
          case "approvalRequested":
          case "approvalDecided":
            void loadApprovals();
            break;
          case "openView":
            if ((VIEWS as readonly string[]).includes(e.view)) setView(e.view as View);
            break;
          default:
            break;
        }
      })
      .then((f) => (cancelled ? f() : (stop = f)));
    return () => {
      cancelled = true;
      stop?.();
    };
  }, [loadState, loadProjects, loadTokens, loadApprovals]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key >= "1" && e.key <= "6") {
        e.preventDefault();
        setView(VIEWS[Number(e.key) - 1]);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  const togglePause = () =>
    guard(async () => {
      if (!state) return;
      setState(await api.setPaused(!state.paused));
    });

  const waiting = approvals.filter((a) => a.status === "pending").length;
  const firstRun = projects.length === 0 || tokens.length === 0;

  return (
    <div className="app">
      <nav className="sidebar" aria-label="Views">
        <div className="brand">Sluice</div>
        <ul>
          {VIEWS.map((v, i) => (
            <li key={v}>
              <button
                type="button"
                aria-current={view === v ? "page" : undefined}
                onClick={() => setView(v)}
                title={`${TITLES[v]} (Ctrl+${i + 1})`}
              >
                {TITLES[v]}
                {v === "approvals" && waiting > 0 && (
                  <span className="badge" data-testid="approvals-badge" aria-label={`${waiting} waiting`}>
                    {waiting}
                  </span>
                )}
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <div className="main">
        <header className="topbar">
          <StatePill state={state} />
          <div className="spacer" />
          <button
            type="button"
            className={state?.paused ? "primary" : ""}
            aria-pressed={state?.paused ?? false}
            disabled={!state}
            onClick={togglePause}
          >
            {state?.paused ? "Resume AI access" : "Pause AI access"}
          </button>
          <button
            type="button"
            className="danger"
            disabled={!state?.emergencyStopAvailable}
            title={
              state?.emergencyStopAvailable
                ? "Stop every running job and deny every waiting approval"
                : "Emergency stop arrives with jobs and approvals; use Pause AI access for now"
            }
          >
            Emergency stop
          </button>
        </header>
        <main className="content" aria-label={TITLES[view]}>
          <ErrorLine error={error} />
          {firstRun && (view === "projects" || view === "tokens") && (
            <FirstRun
              projects={projects}
              tokens={tokens}
              onAuthorize={() => {
                setView("projects");
                setAuthorizeOpen(true);
              }}
              onCreateToken={() => {
                setView("tokens");
                setNewTokenOpen(true);
              }}
            />
          )}
          {view === "projects" && (
            <ProjectsView
              projects={projects}
              authorizeOpen={authorizeOpen}
              setAuthorizeOpen={setAuthorizeOpen}
              reload={loadProjects}
            />
          )}
          {view === "tokens" && (
            <TokensView
              tokens={tokens}
              projects={projects}
              formOpen={newTokenOpen}
              setFormOpen={setNewTokenOpen}
              reload={loadTokens}
            />
          )}
          {view === "approvals" && (
            <ApprovalsView approvals={approvals} paused={state?.paused ?? false} reload={loadApprovals} />
          )}
          {view === "jobs" && <JobsView />}
          {view === "activity" && <ActivityView projects={projects} tokens={tokens} />}
          {view === "settings" && <SettingsView state={state} />}
        </main>
      </div>
    </div>
  );
}

function StatePill({ state }: { state: AppState | null }) {
  if (!state) return <span className="pill">…</span>;
  return state.paused ? (
    <span className="pill paused" data-testid="state-pill" role="status">
      ⏸ Paused
    </span>
  ) : (
    <span className="pill active" data-testid="state-pill" role="status">
      ● AI access on
    </span>
  );
}

// The control-center window: sidebar, top bar with the access state, and one view at a time.
// Data comes from `api`; engine events say what to reload.

import { useCallback, useEffect, useState } from "react";
import { api } from "./api";
import { VIEWS } from "./bindings/ipc";
import type {
  ApprovalDto,
  AppState,
  JobDto,
  ProjectDto,
  ReachStateDto,
  StopResult,
  TokenDto,
} from "./bindings/ipc";
import { ErrorLine, errorMessage } from "./components";
import { ActivityView } from "./views/Activity";
import { ApprovalsView } from "./views/Approvals";
import { ClientsView } from "./views/Clients";
import { JobsView } from "./views/Jobs";
import { FirstRun } from "./views/FirstRun";
import { ProjectsView } from "./views/Projects";
import { SettingsView } from "./views/Settings";
import { TokensView } from "./views/Tokens";

// The sidebar's order (Ctrl+1…6), then Clients (Ctrl+7).
export { VIEWS };
export type View = (typeof VIEWS)[number];

const TITLES: Record<View, string> = {
  projects: "Projects",
  tokens: "Tokens",
  clients: "Clients",
  approvals: "Approvals",
  jobs: "Jobs",
  activity: "Activity",
  settings: "Settings",
};

/** The view the window opens on: the URL's fragment names it when Sluice opens the window for
 * something (a notification, the tray's "Details in Sluice…"). */
export function initialView(hash: string = window.location.hash): View {
  const named = hash.replace(/^#/, "");
  return (VIEWS as readonly string[]).includes(named) ? (named as View) : "projects";
}

export function App() {
  const [view, setView] = useState<View>(initialView);
  const [state, setState] = useState<AppState | null>(null);
  const [projects, setProjects] = useState<ProjectDto[]>([]);
  const [tokens, setTokens] = useState<TokenDto[]>([]);
  const [approvals, setApprovals] = useState<ApprovalDto[]>([]);
  const [jobs, setJobs] = useState<JobDto[]>([]);
  const [reach, setReach] = useState<ReachStateDto | null>(null);
  const [jobActivity, setJobActivity] = useState(0);
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

  const loadJobs = useCallback(() => guard(async () => setJobs(await api.listJobs())), [guard]);
  const loadReach = useCallback(() => guard(async () => setReach(await api.reachState())), [guard]);

  useEffect(() => {
    void loadState();
    void loadProjects();
    void loadTokens();
    void loadApprovals();
    void loadJobs();
    void loadReach();
    let stop: (() => void) | undefined;
    let cancelled = false;
    void api
      .onEvent((e) => {
        switch (e.kind) {
          case "accessChanged":
            // At once, then the whole state: a stop from the tray or the CLI arrives as a pause.
            setState((s) => (s ? { ...s, paused: e.paused } : s));
            void loadState();
            // Reach's setting and its connection requests announce themselves this way too.
            void loadReach();
            break;
          case "projectsChanged":
          case "projectRootLost":
            void loadProjects();
            break;
          case "tokensChanged":
            void loadTokens();
            void loadReach();
            break;
          case "approvalRequested":
          case "approvalDecided":
            void loadApprovals();
            break;
          case "jobChanged":
          case "jobActivity":
            void loadJobs();
            setJobActivity((n) => n + 1);
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
  }, [loadState, loadProjects, loadTokens, loadApprovals, loadJobs, loadReach]);

  // Once the state has loaded and a view is drawn, say so: the page's own marker that checks
  // outside it (the package test, `bench app`) wait for, as the e2e test waits for
  // `main[data-view]`. An error page never sends it.
  const loaded = state !== null;
  useEffect(() => {
    if (loaded) api.windowShown(view).catch(() => {});
  }, [loaded, view]);

  // "Last used" changes without an event: refresh the list when the view opens.
  useEffect(() => {
    if (view === "tokens") void loadTokens();
  }, [view, loadTokens]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key >= "1" && e.key <= String(VIEWS.length)) {
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
  // Stopping is one click (in an emergency nothing may stand in the way); resuming asks.
  const [resumeAsk, setResumeAsk] = useState(false);
  const [stopped, setStopped] = useState<StopResult | null>(null);
  const emergencyStop = () =>
    guard(async () => {
      const r = await api.emergencyStop();
      setState(r.state);
      setStopped(r);
      await Promise.all([loadJobs(), loadApprovals()]);
    });
  const resume = () =>
    guard(async () => {
      setResumeAsk(false);
      setState(await api.setPaused(false));
      setStopped(null);
    });

  // A resume from the tray or the CLI ends what the banner reported.
  useEffect(() => {
    if (!state?.stopped) setStopped(null);
  }, [state?.stopped]);

  const waiting = approvals.filter((a) => a.status === "pending").length;
  const waitingByProject: Record<string, number> = {};
  for (const a of approvals) {
    if (a.status === "pending") waitingByProject[a.projectId] = (waitingByProject[a.projectId] ?? 0) + 1;
  }
  const running = jobs.filter((j) => j.state === "running").length;
  // Until an assistant has connected with a live token: all three steps done.
  const firstRun =
    projects.length === 0 || !tokens.some((t) => t.revokedMs === null && t.lastUsedMs !== null);

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
                {v === "jobs" && running > 0 && (
                  <span className="badge neutral" data-testid="jobs-badge" aria-label={`${running} running`}>
                    {running}
                  </span>
                )}
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
          {state?.stopped ? (
            <button type="button" className="primary" onClick={() => setResumeAsk(true)}>
              Resume AI access
            </button>
          ) : (
            <>
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
                disabled={!state}
                title="Kill every running job, deny every waiting approval, refuse AI requests until you resume"
                onClick={emergencyStop}
              >
                Emergency stop
              </button>
            </>
          )}
        </header>
        {resumeAsk && (
          <div className="confirm-bar" role="group" aria-label="Confirm resume" data-testid="resume-confirm">
            <p>
              Resume AI access? Assistants can make requests again. Jobs that were killed stay
              stopped; denied approvals stay denied.
            </p>
            <button type="button" className="primary" onClick={resume}>
              Resume
            </button>
            <button type="button" autoFocus onClick={() => setResumeAsk(false)}>
              Stay stopped
            </button>
          </div>
        )}
        {state?.stopped && !resumeAsk && (
          <p className="banner bad stopped-banner" role="status" data-testid="stopped-banner">
            Emergency stop is on: every AI request is refused until you resume.
            {stopped &&
              ` ${stopped.killedJobs} ${stopped.killedJobs === 1 ? "job" : "jobs"} killed, ` +
                `${stopped.deniedApprovals} ${stopped.deniedApprovals === 1 ? "approval" : "approvals"} denied.`}
          </p>
        )}
        {state && state.integrity.length > 0 && (
          <div className="banner bad" role="alert" data-testid="integrity-banner">
            <p>
              Sluice&apos;s database was changed outside Sluice (without its install secret). What
              changed gets less access, never more, until you act:
            </p>
            <ul>
              {state.integrity.map((f) => (
                <li key={`${f.code}:${f.subject}`}>{f.message}</li>
              ))}
            </ul>
            <p>
              To accept the database as it is now, review this list, then run{" "}
              <code>sluice doctor --reseal</code>.
            </p>
          </div>
        )}
        <main className="content" aria-label={TITLES[view]} data-view={loaded ? view : undefined}>
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
              onConnect={() => setView("clients")}
            />
          )}
          {view === "projects" && (
            <ProjectsView
              projects={projects}
              authorizeOpen={authorizeOpen}
              setAuthorizeOpen={setAuthorizeOpen}
              reload={loadProjects}
              waiting={waitingByProject}
              openApprovals={() => setView("approvals")}
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
          {view === "clients" && (
            <ClientsView
              onCreateToken={() => {
                setView("tokens");
                setNewTokenOpen(true);
              }}
            />
          )}
          {view === "approvals" && (
            <ApprovalsView approvals={approvals} paused={state?.paused ?? false} reload={loadApprovals} />
          )}
          {view === "jobs" && (
            <JobsView
              jobs={jobs}
              projects={projects}
              activity={jobActivity}
              reload={loadJobs}
              openProjects={() => setView("projects")}
            />
          )}
          {view === "activity" && <ActivityView projects={projects} tokens={tokens} />}
          {view === "settings" && (
            <SettingsView
              state={state}
              reach={reach}
              projects={projects}
              reloadReach={loadReach}
              onState={setState}
            />
          )}
        </main>
      </div>
    </div>
  );
}

function StatePill({ state }: { state: AppState | null }) {
  if (!state) return <span className="pill">…</span>;
  if (state.stopped) {
    return (
      <span className="pill stopped" data-testid="state-pill" role="status">
        ⛔ Stopped
      </span>
    );
  }
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

// Settings: where Sluice listens and keeps its data, the secret's storage, the access state.

import { useEffect, useState } from "react";
import { api } from "../api";
import type {
  AppState,
  PortCheck,
  ProjectDto,
  ReachStateDto,
  RegistryDto,
  SandboxAccountState,
} from "../bindings/ipc";
import { AddField, ErrorLine, Text, errorMessage } from "../components";
import { visible } from "../format";
import { ReachPanel } from "./Reach";
import { Guarantees, layerLine } from "./Sandbox";

export function SettingsView(props: {
  state: AppState | null;
  reach?: ReachStateDto | null;
  projects?: ProjectDto[];
  reloadReach?: () => Promise<void>;
  /** Takes the state a command answered with (the sandbox account's setup). */
  onState?: (state: AppState) => void;
}) {
  const { state } = props;
  if (!state) return null;
  return (
    <section aria-label="Settings">
      <h1>Settings</h1>
      <dl className="settings">
        <dt>MCP endpoint</dt>
        <dd>
          <Text mono>{state.mcpUrl}</Text>
          <p className="muted">
            Port {state.port} on this computer only. Set SLUICE_PORT before starting Sluice to
            change it.
          </p>
          <PortStatus port={state.port} />
        </dd>
        <dt>AI access</dt>
        <dd>
          {state.stopped
            ? "Stopped (emergency stop) — every request is refused until you resume"
            : state.paused
              ? "Paused — every request is refused"
              : "On"}
        </dd>
        <dt>Reach from the web</dt>
        <dd>
          <ReachPanel
            reach={props.reach ?? null}
            projects={props.projects ?? []}
            reload={props.reloadReach ?? (async () => {})}
          />
        </dd>
        <dt>Start at login</dt>
        <dd>
          <StartAtLogin />
        </dd>
        <dt>Command confinement</dt>
        <dd data-testid="confinement">
          <Text>{state.confinement}</Text>
          <p className="muted">Commands run as argv without a shell, in a cleared environment, writing only inside their project.</p>
          <p data-testid="confinement-layers">{layerLine({ namespaces: state.namespaces, full: state.guarantees.every((g) => g.holds) })}.</p>
          <Guarantees guarantees={state.guarantees} />
          {state.sandboxAccount && <SandboxAccount account={state.sandboxAccount} onState={props.onState} />}
        </dd>
        <dt>Hidden from commands</dt>
        <dd data-testid="hidden-from-jobs">
          {state.hiddenFromJobs.length === 0 ? (
            <span className="muted">No credential store found on this machine.</span>
          ) : (
            <Text mono>{state.hiddenFromJobs.join(", ")}</Text>
          )}
        </dd>
        <dt>Package registries</dt>
        <dd data-testid="registries">
          <Registries initial={state.registries} available={state.registriesAvailable} />
        </dd>
        <dt>Data folder</dt>
        <dd>
          <Text mono>{state.dataDir}</Text>
        </dd>
        <dt>Install secret</dt>
        <dd>
          {state.secret.inKeychain ? (
            <>
              In the system keychain (<Text>{state.secret.location}</Text>)
            </>
          ) : (
            <>
              In an owner-only file: <Text mono>{state.secret.location}</Text>
              {state.secret.reason && (
                <p className="muted">
                  Not in the keychain because: <Text>{state.secret.reason}</Text>
                </p>
              )}
            </>
          )}
        </dd>
        <dt>Version</dt>
        <dd>{state.version}</dd>
      </dl>
      <CopyDiagnostics state={state} />
    </section>
  );
}

/** Whether this Sluice serves its port now, and a check that another port is free before
 * choosing it for SLUICE_PORT. The answers are Sluice's own sentences, shown as text. */
function PortStatus({ port }: { port: number }) {
  const [own, setOwn] = useState<PortCheck | null>(null);
  const [other, setOther] = useState("");
  const [checked, setChecked] = useState<PortCheck | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    api
      .checkPort(port)
      .then((c) => live && setOwn(c))
      .catch((e) => live && setError(errorMessage(e)));
    return () => {
      live = false;
    };
  }, [port]);
  const wanted = Number(other);
  const valid = other.trim() !== "" && Number.isInteger(wanted) && wanted >= 1 && wanted <= 65535;
  const check = async () => {
    if (!valid) return;
    try {
      setChecked(await api.checkPort(wanted));
      setError(null);
    } catch (e) {
      setChecked(null);
      setError(errorMessage(e));
    }
  };
  return (
    <>
      {own && (
        <p data-testid="port-status" className={own.status === "this-sluice" ? "" : "error"}>
          <Text>{own.message}</Text>
        </p>
      )}
      <form
        className="row port-check"
        onSubmit={(e) => {
          e.preventDefault();
          void check();
        }}
      >
        <label>
          Check another port{" "}
          <input
            name="port"
            inputMode="numeric"
            value={other}
            onChange={(e) => {
              setOther(e.target.value);
              setChecked(null);
            }}
          />
        </label>
        <button type="submit" disabled={!valid}>
          Check
        </button>
        <span role="status" data-testid="port-check">
          {checked && <Text>{checked.message}</Text>}
        </span>
      </form>
      <ErrorLine error={error} />
    </>
  );
}

/** A home folder at the start of a path: `/home/ana`, `/Users/ana`, `C:\Users\ana`. */
const HOME = /^(\/home\/[^/]+|\/Users\/[^/]+|\/root|[A-Za-z]:\\Users\\[^\\]+)(?=[/\\]|$)/;

/** What to paste into a bug report: versions and state, no tokens and no user name (a home
 * folder shows as `~`). */
export function diagnostics(state: AppState, platform: string): string {
  const home = (p: string) => p.replace(HOME, "~");
  const access = state.stopped ? "stopped" : state.paused ? "paused" : "on";
  const secret = state.secret.inKeychain
    ? `system keychain (${state.secret.location})`
    : `owner-only file${state.secret.reason ? ` (not in the keychain: ${state.secret.reason})` : ""}`;
  return [
    `Sluice ${state.version}`,
    `Platform: ${platform}`,
    `MCP endpoint: ${state.mcpUrl}`,
    `AI access: ${access}`,
    `Command confinement: ${state.confinement}`,
    ...state.guarantees.map((g) => `  ${g.holds ? "holds" : "does not hold"}: ${g.what}`),
    `Hidden from commands: ${state.hiddenFromJobs.join(", ") || "none found"}`,
    `Install secret: ${secret}`,
    `Data folder: ${home(state.dataDir)}`,
  ].join("\n");
}

function CopyDiagnostics({ state }: { state: AppState }) {
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const copy = async () => {
    try {
      await api.copy(diagnostics(state, navigator.platform || "unknown"), false);
      setCopied(true);
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  return (
    <div className="row">
      <button type="button" onClick={() => void copy()}>
        Copy diagnostics
      </button>
      <span className="muted" role="status">
        {copied ? "Copied: version, platform and state, without tokens or your user name." : ""}
      </span>
      <ErrorLine error={error} />
    </div>
  );
}

/** The autostart switch; its state lives in the OS (a login item), so it is read, not assumed. */
function StartAtLogin() {
  const [on, setOn] = useState<boolean | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    api
      .startAtLogin()
      .then((v) => live && setOn(v))
      .catch((e) => live && setError(errorMessage(e)));
    return () => {
      live = false;
    };
  }, []);
  const toggle = async (want: boolean) => {
    try {
      await api.setStartAtLogin(want);
      setOn(await api.startAtLogin());
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  return (
    <>
      <label>
        <input
          type="checkbox"
          name="start-at-login"
          checked={on ?? false}
          disabled={on === null}
          onChange={(e) => void toggle(e.target.checked)}
        />{" "}
        Start Sluice when I log in
      </label>
      <ErrorLine error={error} />
    </>
  );
}

/** Windows: the account commands run as, set up or repaired with an administrator's consent
 *  (the UAC prompt); removing it is an administrator's command. */
function SandboxAccount(props: { account: SandboxAccountState; onState?: (state: AppState) => void }) {
  const [busy, setBusy] = useState(false);
  const [refused, setRefused] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const setUp = async () => {
    setBusy(true);
    try {
      const done = await api.setUpSandboxAccount();
      setRefused(done.refused);
      setError(null);
      props.onState?.(done.state);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const partial = props.account === "partial";
  return (
    <div data-testid="sandbox-account">
      {props.account === "set-up" ? (
        <p className="muted">
          To remove the sandbox account, run <Text mono>sluice sandbox teardown</Text> in a terminal opened as
          administrator.
        </p>
      ) : (
        <>
          <p className="muted">
            {partial
              ? "Part of the sandbox account is missing (named above): commands run as you until it is repaired."
              : "With the sandbox account, commands run as a separate Windows account that cannot read your profile, your credential stores or Sluice's data."}{" "}
            Windows asks for an administrator&apos;s consent.
          </p>
          <button type="button" onClick={setUp} disabled={busy}>
            {partial ? "Repair the sandbox account…" : "Set up the sandbox account…"}
          </button>
        </>
      )}
      {refused.length > 0 && (
        <>
          <p>Windows refused these rules:</p>
          <ul aria-label="Refused rules">
            {refused.map((r) => (
              <li key={r}>
                <Text mono>{r}</Text>
              </li>
            ))}
          </ul>
        </>
      )}
      <ErrorLine error={error} />
    </div>
  );
}

/** The hosts commands of projects on the "registries" network reach, editable: adding one asks
 *  in a system dialog (the engine's), removing one does not. */
function Registries({ initial, available }: { initial: RegistryDto[]; available: boolean }) {
  const [list, setList] = useState(initial);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => setList(initial), [initial]);
  const save = async (hosts: string[] | null) => {
    try {
      setList(await api.setRegistries(hosts));
      setError(null);
      return true;
    } catch (e) {
      setError(errorMessage(e));
      return false;
    }
  };
  const hosts = list.map((r) => r.host);
  return (
    <>
      <p className="muted">
        Projects whose network is Registries reach only these hosts, over HTTPS through
        Sluice&apos;s proxy; a registry also accepts uploads from anyone with an account there.
        {!available && " Nothing on this system keeps a command to that proxy alone (see Command confinement above), so those projects' commands do not run here."}
      </p>
      <ul>
        {list.map((r) => (
          <li key={r.host}>
            <Text mono>{r.host}</Text>
            {r.serves && <span className="muted"> — {r.serves}</span>}{" "}
            <button
              type="button"
              className="small"
              aria-label={`Remove ${visible(r.host)}`}
              onClick={() => save(hosts.filter((h) => h !== r.host))}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      <AddField
        label="New registry host"
        placeholder="pypi.corp.example or *.corp.example"
        button="Add host"
        add={(host) => save([...hosts, host])}
      >
        <button type="button" onClick={() => save(null)}>
          Restore defaults
        </button>
      </AddField>
      <ErrorLine error={error} />
    </>
  );
}

// The sandbox a project's commands run in: which layers hold here, the credential stores they
// never read (the defaults, with the user's additions and removals), the stores granted to the
// project and the host sockets it opted in to, each with what it exposes. Granting, un-hiding,
// opting in and lifting "require full confinement" are confirmed natively by the shell.

import { api } from "../api";
import type { GuaranteeDto, ProjectDto, SandboxDto, SandboxSettingsDto } from "../bindings/ipc";
import { AddField, Text, errorMessage } from "../components";

/** "Namespaces — every layer holds" or "Fallback: Landlock and seccomp alone". */
export function layerLine(s: { namespaces: boolean; full: boolean }): string {
  if (s.namespaces) return s.full ? "Namespaces — every layer holds" : "Namespaces, second layer incomplete";
  return "Fallback: Landlock and seccomp alone — fewer guarantees hold";
}

/** Which promises of the sandbox hold here and which do not. */
export function Guarantees({ guarantees }: { guarantees: GuaranteeDto[] }) {
  return (
    <ul className="guarantees" aria-label="Guarantees">
      {guarantees.map((g) => (
        <li key={g.what} className={g.holds ? "holds" : "missing"}>
          {g.holds ? "✓ holds: " : "✗ does not hold: "}
          <Text>{g.what}</Text>
        </li>
      ))}
    </ul>
  );
}

/** The sandbox in a few lines (approval cards): layers, hidden count (expandable), grants and
 * sockets with their warnings, and why the command would be refused. */
export function SandboxSummary({ sandbox }: { sandbox: SandboxDto }) {
  return (
    <div className="sandbox-summary" data-testid="sandbox-summary">
      <p className="muted">Sandbox: {layerLine(sandbox)}.</p>
      {sandbox.refusal && (
        <p className="warning" role="alert">
          <Text>{sandbox.refusal}</Text>
        </p>
      )}
      <HiddenList sandbox={sandbox} />
      {sandbox.grants.map((g) => (
        <p key={g.path} className="warning" data-testid="sandbox-grant">
          Can read <Text mono>{g.path}</Text>
          {g.holds && (
            <>
              {" "}
              (<Text>{g.holds}</Text>)
            </>
          )}
          , read-only.
        </p>
      ))}
      {sandbox.sockets.map((s) => (
        <p key={s} className="warning" data-testid="sandbox-socket">
          Can connect to <Text mono>{s}</Text>: <Text>{sandbox.socketWarning}</Text>.
        </p>
      ))}
    </div>
  );
}

function HiddenList({ sandbox }: { sandbox: SandboxDto }) {
  const present = sandbox.hidden.filter((h) => h.present).length;
  return (
    <details className="hidden-list">
      <summary data-testid="sandbox-hidden-count">
        {sandbox.hidden.length} credential stores hidden ({present} on this machine)
      </summary>
      <ul>
        {sandbox.hidden.map((h) => (
          <li key={h.path}>
            <Text mono>{h.path}</Text>
            {h.holds && (
              <span className="muted">
                {" "}
                — <Text>{h.holds}</Text>
              </span>
            )}
            {!h.default && <span className="muted"> (added by you)</span>}
          </li>
        ))}
      </ul>
    </details>
  );
}

/** The project's sandbox, editable: hidden list, grants, sockets, require full confinement. */
export function SandboxEditor({
  project,
  onError,
}: {
  project: ProjectDto;
  onError: (e: string | null) => void;
}) {
  const sb = project.sandbox;
  const settings = sb.settings;
  const save = async (next: Partial<SandboxSettingsDto>) => {
    try {
      await api.setSandbox(project.id, { ...settings, ...next });
      onError(null);
      return true;
    } catch (e) {
      onError(errorMessage(e));
      return false;
    }
  };
  const without = (list: string[], x: string) => list.filter((y) => y !== x);
  return (
    <fieldset className="sandbox" aria-label="Sandbox">
      <legend>Sandbox for commands</legend>
      <p data-testid="sandbox-layers">
        {layerLine(sb)}. <span className="muted"><Text>{sb.summary}</Text></span>
      </p>
      {sb.refusal && (
        <p className="warning" role="alert" data-testid="sandbox-refusal">
          <Text>{sb.refusal}</Text>
        </p>
      )}
      <Guarantees guarantees={sb.guarantees} />
      <label className="row">
        <input
          type="checkbox"
          checked={sb.requireFull}
          onChange={(e) => save({ requireFull: e.target.checked })}
        />
        Require full confinement: commands refuse to run without namespaces or with a layer
        missing
      </label>

      <h4>Hidden from commands</h4>
      <details className="hidden-list">
        <summary data-testid="sandbox-hidden-count">
          {sb.hidden.length} credential stores hidden ({sb.hidden.filter((h) => h.present).length}{" "}
          on this machine)
        </summary>
        <ul>
          {sb.hidden.map((h) => (
            <li key={h.path}>
              <Text mono>{h.path}</Text>
              {h.holds && (
                <span className="muted">
                  {" "}
                  — <Text>{h.holds}</Text>
                </span>
              )}{" "}
              {h.default ? (
                <button
                  type="button"
                  className="small"
                  aria-label={`Un-hide ${h.path}`}
                  onClick={() => save({ unhide: [...settings.unhide, h.path] })}
                >
                  Un-hide
                </button>
              ) : (
                <button
                  type="button"
                  className="small"
                  aria-label={`Stop hiding ${h.path}`}
                  onClick={() => save({ hide: without(settings.hide, h.path) })}
                >
                  Remove
                </button>
              )}
            </li>
          ))}
        </ul>
      </details>
      {sb.unhidden.length > 0 && (
        <ul aria-label="Un-hidden defaults">
          {sb.unhidden.map((h) => (
            <li key={h.path} className="warning">
              Not hidden: <Text mono>{h.path}</Text>{" "}
              <button
                type="button"
                className="small"
                aria-label={`Hide ${h.path} again`}
                onClick={() => save({ unhide: without(settings.unhide, h.path) })}
              >
                Hide again
              </button>
            </li>
          ))}
        </ul>
      )}
      <AddField
        label="Path to hide"
        placeholder="~/.config/tool or /opt/secrets"
        button="Hide"
        add={(v) => save({ hide: [...settings.hide, v] })}
      />

      <h4>Granted stores</h4>
      {sb.grants.length === 0 ? (
        <p className="muted">None: commands read no credential store.</p>
      ) : (
        <ul aria-label="Granted stores">
          {sb.grants.map((g) => (
            <li key={g.path} className="warning">
              Commands can read <Text mono>{g.path}</Text>
              {g.holds && (
                <>
                  {" "}
                  (<Text>{g.holds}</Text>)
                </>
              )}
              , read-only{!g.present && " (not on this machine now)"}.{" "}
              <button
                type="button"
                className="small"
                aria-label={`Revoke ${g.path}`}
                onClick={() => save({ grants: without(settings.grants, g.path) })}
              >
                Revoke
              </button>
            </li>
          ))}
        </ul>
      )}
      <AddField
        label="Store to grant"
        placeholder="~/.npmrc"
        button="Grant…"
        add={(v) => save({ grants: [...settings.grants, v] })}
      />

      <h4>Host sockets</h4>
      {sb.sockets.length === 0 ? (
        <p className="muted">None: commands reach no socket outside their project.</p>
      ) : (
        <ul aria-label="Host sockets">
          {sb.sockets.map((s) => (
            <li key={s} className="warning" data-testid="sandbox-socket">
              Commands can connect to <Text mono>{s}</Text>: <Text>{sb.socketWarning}</Text>.{" "}
              <button
                type="button"
                className="small"
                aria-label={`Remove socket ${s}`}
                onClick={() => save({ sockets: without(settings.sockets, s) })}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <AddField
        label="Socket to allow"
        placeholder="/var/run/docker.sock"
        button="Allow socket…"
        add={(v) => save({ sockets: [...settings.sockets, v] })}
      />
      <p className="muted">
        Granting a store, un-hiding one, allowing a socket or lifting the requirement asks you in
        a system dialog. A socket like Docker&apos;s is equivalent to full access to this machine.
      </p>
    </fieldset>
  );
}

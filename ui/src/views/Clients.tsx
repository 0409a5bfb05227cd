// Clients: one-click Connect. Each client Sluice can configure gets a row with Connect /
// Disconnect; Connect first shows the exact change to the client's file (a diff, as text),
// writes it only when the user applies it, then shows the connection check's result. Each row
// also says whether the entry still works (a real MCP call with the entry's own token, checked
// after the list is shown) and offers Repair when rewriting Sluice's entry can fix it.

import { useCallback, useEffect, useState } from "react";
import { CLIPBOARD_CLEAR_MS, api } from "../api";
import type {
  ClientDto,
  ClientHealthDto,
  ConfigPreview,
  ConnectResult,
  DisconnectResult,
  RepairResult,
} from "../bindings/ipc";
import { ErrorLine, Text, errorMessage } from "../components";
import { visible } from "../format";

type Pending = { kind: "connect" | "disconnect" | "repair"; preview: ConfigPreview };
type Done =
  | { kind: "connect"; result: ConnectResult }
  | { kind: "disconnect"; result: DisconnectResult }
  | { kind: "repair"; result: RepairResult };

/** A health state in words; the class colours it sparingly. */
const HEALTH: Record<string, { label: string; className: string }> = {
  working: { label: "Working", className: "status-available" },
  broken: { label: "Broken", className: "error" },
  unverified: { label: "Not verified", className: "muted" },
  not_running: { label: "Not checked", className: "muted" },
  not_configured: { label: "Not configured", className: "muted" },
  not_installed: { label: "Not installed here", className: "muted" },
};

export function ClientsView(props: { onCreateToken: () => void }) {
  const [clients, setClients] = useState<ClientDto[] | null>(null);
  const [health, setHealth] = useState<Map<string, ClientHealthDto> | null>(null);
  const [pending, setPending] = useState<Pending | null>(null);
  const [done, setDone] = useState<Done | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setClients(await api.listClients());
    } catch (e) {
      setError(errorMessage(e));
      return;
    }
    // The health check makes real MCP calls: the list is shown first, health when it is in.
    try {
      const list = await api.clientHealth();
      setHealth(new Map(list.map((h) => [h.client, h])));
    } catch (e) {
      setError(errorMessage(e));
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const run = async (f: () => Promise<void>) => {
    setBusy(true);
    try {
      await f();
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const preview = (c: ClientDto, kind: Pending["kind"]) =>
    run(async () => {
      setDone(null);
      setPending(null);
      const p =
        kind === "connect"
          ? await api.connectPreview(c.client)
          : kind === "repair"
            ? await api.repairPreview(c.client)
            : await api.disconnectPreview(c.client);
      setPending({ kind, preview: p });
    });
  const apply = () =>
    run(async () => {
      if (!pending) return;
      const { kind, preview: p } = pending;
      // A preview is used once: whatever happens next, it is gone.
      setPending(null);
      try {
        setDone(
          kind === "connect"
            ? { kind, result: await api.connectApply(p.id) }
            : kind === "repair"
              ? { kind, result: await api.repairApply(p.id) }
              : { kind, result: await api.disconnectApply(p.id) },
        );
      } finally {
        await load();
      }
    });

  const writable = clients?.filter((c) => c.hasConfig) ?? [];
  const snippetOnly = clients?.filter((c) => !c.hasConfig) ?? [];
  const plain = writable.filter((c) => c.plainText).map((c) => c.title);

  return (
    <section aria-label="Clients">
      <div className="section-head">
        <h1>Clients</h1>
        <button type="button" onClick={() => void load()} title="Look at the clients' settings files again">
          Refresh
        </button>
      </div>
      <p className="muted">
        Connect writes Sluice into an assistant's own settings file with a new token for it. You
        see the exact change first; the previous file is kept as a backup next to it, and other
        servers in the file are left as they are.
      </p>
      {plain.length > 0 && (
        <p className="warning" data-testid="plain-text-clients">
          These clients keep the token in plain text in their settings file: {plain.join(", ")}.
          Anyone who can read that file can use the token until you revoke it.
        </p>
      )}
      <ErrorLine error={error} />
      {pending && (
        <PreviewPanel pending={pending} busy={busy} onApply={apply} onCancel={() => setPending(null)} />
      )}
      {done && <DonePanel done={done} onClose={() => setDone(null)} />}
      {clients === null ? null : (
        <table className="list">
          <thead>
            <tr>
              <th>Client</th>
              <th>Settings file</th>
              <th>Status</th>
              <th>Token</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {writable.map((c) => (
              <tr key={c.client} data-testid="client-row" aria-label={c.title}>
                <td>{c.title}</td>
                <td>
                  {c.configPath && <Text mono>{c.configPath}</Text>}
                  {!c.configFound && <div className="muted">Not there yet: Connect creates it.</div>}
                </td>
                <td>
                  {c.problem ? (
                    <span className="error">
                      Cannot use the file: <Text>{c.problem}</Text>
                    </span>
                  ) : c.connected ? (
                    <span className="status-available">Connected</span>
                  ) : (
                    <span className="muted">Not connected</span>
                  )}
                  <HealthLine health={health === null ? undefined : (health.get(c.client) ?? null)} />
                </td>
                <td className={c.plainText ? "warning" : ""}>{c.plainText ? "Plain text in the file" : c.storage}</td>
                <td>
                  <span className="row">
                    <button
                      type="button"
                      disabled={busy || c.problem !== null}
                      onClick={() => preview(c, "connect")}
                      aria-label={`${c.connected ? "Reconnect" : "Connect"} ${c.title}`}
                    >
                      {c.connected ? "Reconnect…" : "Connect…"}
                    </button>
                    {health?.get(c.client)?.repairable && (
                      <button
                        type="button"
                        disabled={busy}
                        onClick={() => preview(c, "repair")}
                        aria-label={`Repair ${c.title}`}
                      >
                        Repair…
                      </button>
                    )}
                    {c.connected && (
                      <button
                        type="button"
                        disabled={busy}
                        onClick={() => preview(c, "disconnect")}
                        aria-label={`Disconnect ${c.title}`}
                      >
                        Disconnect…
                      </button>
                    )}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {snippetOnly.length > 0 && (
        <div className="card">
          <h2>Other clients</h2>
          <p className="muted">
            {snippetOnly.map((c) => c.title).join(", ")}: Sluice cannot write these settings.
            Create a token and copy the setup shown for it.
          </p>
          <button type="button" onClick={props.onCreateToken}>
            New token with setup to copy
          </button>
        </div>
      )}
    </section>
  );
}

/** Whether the entry still works: the state, why, and where its token lives. `undefined`:
 * still checking; `null`: no answer for this client. */
function HealthLine({ health }: { health: ClientHealthDto | null | undefined }) {
  if (health === undefined) {
    return <div className="muted">Checking whether it works…</div>;
  }
  // "Not connected" and the settings file column already say it: no second line.
  if (health === null || health.state === "not_configured" || health.state === "not_installed") {
    return null;
  }
  const shown = HEALTH[health.state] ?? { label: health.state, className: "muted" };
  return (
    <div data-testid="health" data-state={health.state} data-code={health.code}>
      <span className={shown.className}>{shown.label}</span>
      {health.reason && (
        <>
          : <Text>{health.reason}</Text>
        </>
      )}
      {health.tokenLocation && <div className="muted">Token: {health.tokenLocation}.</div>}
    </div>
  );
}

/** A diff line by line, as text; added and removed lines are marked by class only. */
function Diff({ text }: { text: string }) {
  const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
  return (
    <pre className="snippet diff" data-testid="diff">
      {lines.map((line, i) => {
        const kind =
          line.startsWith("+++") || line.startsWith("---") || line.startsWith("@@")
            ? "meta"
            : line.startsWith("+")
              ? "add"
              : line.startsWith("-")
                ? "del"
                : "same";
        return (
          <span key={i} className={`diff-${kind}`}>
            {visible(line)}
            {"\n"}
          </span>
        );
      })}
    </pre>
  );
}

function PreviewPanel(props: {
  pending: Pending;
  busy: boolean;
  onApply: () => void;
  onCancel: () => void;
}) {
  const { kind, preview: p } = props.pending;
  const connect = kind === "connect";
  const repair = kind === "repair";
  const what = connect ? `Connect ${p.title}` : repair ? `Repair ${p.title}` : `Disconnect ${p.title}`;
  return (
    <section className="card" aria-label={what}>
      <h2>{what}</h2>
      <p>
        {p.fileExists ? "Sluice will change " : "Sluice will create "}
        <Text mono>{p.path}</Text>
        {connect
          ? " and create a token for it. The token goes where the placeholder is."
          : repair
            ? ": only Sluice's entry is rewritten, with the current port and program."
            : ": only Sluice's entry is removed."}
      </p>
      {repair && p.note && (
        <p data-testid="repair-note">
          <Text>{p.note}</Text>
        </p>
      )}
      {connect && p.plainText && (
        <p className="warning" role="note" data-testid="plain-text-warning">
          {p.title} keeps the token in plain text in this file. Anyone who can read the file can use
          the token until you revoke it.
        </p>
      )}
      {connect && !p.plainText && p.storage && <p className="muted">{p.storage}.</p>}
      {p.noop ? (
        <p className="muted">
          {repair ? "The entry is already as a repair writes it." : "Nothing to change: Sluice is not in this file."}
        </p>
      ) : (
        <Diff text={p.diff} />
      )}
      {p.fileExists && !p.noop && (
        <p className="muted">A copy of the current file is kept next to it before anything is written.</p>
      )}
      <div className="row">
        <button type="button" className="primary" disabled={props.busy} onClick={props.onApply}>
          {connect
            ? "Apply and connect"
            : repair
              ? "Apply repair"
              : p.noop
                ? "Forget its stored token"
                : "Apply and disconnect"}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </section>
  );
}

function DonePanel({ done, onClose }: { done: Done; onClose: () => void }) {
  const [copied, setCopied] = useState(false);
  if (done.kind === "disconnect") {
    const r = done.result;
    return (
      <section className="card result" aria-label={`Disconnected ${r.title}`}>
        <p role="status">
          {r.removed ? `Removed Sluice from ${r.title}'s settings.` : `${r.title} had no Sluice entry.`}
          {r.forgotStoredToken && " Forgot the token kept for it."}
        </p>
        {r.backup && (
          <p className="muted">
            Backup of the previous file: <Text mono>{r.backup}</Text>
          </p>
        )}
        <p className="muted">Its token keeps working until you revoke it in Tokens.</p>
        <button type="button" onClick={onClose}>
          Done
        </button>
      </section>
    );
  }
  if (done.kind === "repair") {
    const r = done.result;
    const ok = r.health.state === "working" || r.health.state === "unverified";
    return (
      <section className="card result" aria-label={`Repaired ${r.title}`}>
        <p data-testid="repair-result" role="status" className={ok ? "status-available" : "error"}>
          {r.health.state === "working" ? (
            <>
              Repaired and working: <Text>{r.health.reason}</Text>
            </>
          ) : (
            <>
              Written; now {HEALTH[r.health.state]?.label.toLowerCase() ?? r.health.state}:{" "}
              <Text>{r.health.reason}</Text>
            </>
          )}
        </p>
        <p className="muted">
          <Text>{r.note}</Text>
          {r.tokenLabel && (
            <>
              {" "}
              New token: <Text>{r.tokenLabel}</Text>.
            </>
          )}
        </p>
        {r.backup && (
          <p className="muted">
            Backup of the previous file: <Text mono>{r.backup}</Text>
          </p>
        )}
        <p>{r.reloadHint}</p>
        <button type="button" onClick={onClose}>
          Done
        </button>
      </section>
    );
  }
  const r = done.result;
  return (
    <section className="card result" aria-label={`Connected ${r.title}`}>
      <p data-testid="check-result" role="status" className={r.check.ok ? "status-available" : "error"}>
        {r.check.ok ? (
          <>
            Connected: <Text>{r.check.message}</Text>
          </>
        ) : (
          <>
            Written, but the connection check failed: <Text>{r.check.message}</Text>
          </>
        )}
      </p>
      <p className="muted">
        Wrote <Text mono>{r.path}</Text>
        {r.tokenLabel && (
          <>
            {" "}
            with the new token <Text>{r.tokenLabel}</Text>
          </>
        )}
        .
      </p>
      {r.backup && (
        <p className="muted">
          Backup of the previous file: <Text mono>{r.backup}</Text>
        </p>
      )}
      {r.secret && (
        <>
          <p className="warning">{r.secretHint}</p>
          <div className="row">
            <input className="mono secret" readOnly value={r.secret} aria-label="The new token" />
            <button
              type="button"
              onClick={async () => {
                await api.copy(r.secret ?? "", true);
                setCopied(true);
              }}
            >
              Copy
            </button>
          </div>
          <p className="muted" aria-live="polite">
            {copied
              ? `Copied. The clipboard is cleared after ${CLIPBOARD_CLEAR_MS / 1000} seconds.`
              : `Copied text is cleared from the clipboard after ${CLIPBOARD_CLEAR_MS / 1000} seconds.`}
          </p>
        </>
      )}
      <p>{r.reloadHint}</p>
      <button type="button" onClick={onClose}>
        Done
      </button>
    </section>
  );
}

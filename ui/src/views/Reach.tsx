// Reach from the web (Settings): off by default. Turning it on (`ReachForm`) picks the tunnel
// (the user's own, or one Sluice runs), the projects and read-only or writes, and is confirmed
// in a native dialog. While on: the connector URL to give ChatGPT or Claude.ai, the tunnel,
// Change… (the same form, filled in, asked natively again), the connection requests with the
// code their page shows (approving asks natively too), how to add the connector, and Turn off.
// With OpenAI's Secure MCP Tunnel there is no URL to give: ChatGPT picks the tunnel by its ID,
// with no authentication (the tunnel is it), so the window says that instead.
//
// Client names and hosts come from the network: they are shown as text only, and nothing here
// opens a URL.

import { useEffect, useState } from "react";
import { api } from "../api";
import type { ConnectionRequestDto, ProjectDto, ReachSettingDto, ReachStateDto, TunnelDto } from "../bindings/ipc";
import { ConfirmButton, ErrorLine, Text, Time, errorMessage, useNow } from "../components";
import { exactTime, visible } from "../format";
import { INERT_MS, countdown } from "./Approvals";
import { ReachForm } from "./ReachForm";

export function ReachPanel(props: {
  reach: ReachStateDto | null;
  projects: ProjectDto[];
  reload: () => Promise<void>;
}) {
  const [formOpen, setFormOpen] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  if (!props.reach) return null;
  const setting = props.reach.setting;

  const turnOff = async () => {
    setFormOpen(false);
    try {
      const revoked = await api.reachOff();
      setNote(
        `Reach from the web is off; ${revoked} remote ${revoked === 1 ? "token" : "tokens"} revoked.`,
      );
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    }
    await props.reload();
  };

  return (
    <div className="reach" data-testid="reach">
      {setting === null ? (
        <>
          <p data-testid="reach-status">
            Off. Turned on, ChatGPT and Claude.ai can use the projects you choose through a tunnel:
            one you run, or one Sluice runs for you (Cloudflare, Tailscale Funnel, ngrok, OpenAI&apos;s
            Secure MCP Tunnel, your own command). Each assistant asks to connect first, and you approve
            it here; with OpenAI&apos;s tunnel you decide once, for the tunnel.
          </p>
          {note && (
            <p className="muted" role="status">
              {note}
            </p>
          )}
          {formOpen ? (
            <ReachForm
              projects={props.projects}
              initial={null}
              onCancel={() => setFormOpen(false)}
              onDone={async () => {
                setFormOpen(false);
                setNote(null);
                await props.reload();
              }}
            />
          ) : (
            <button type="button" onClick={() => setFormOpen(true)}>
              Turn on…
            </button>
          )}
        </>
      ) : (
        <>
          <OnPanel setting={setting} remoteTokens={props.reach.remoteTokens} />
          {formOpen ? (
            <ReachForm
              projects={props.projects}
              initial={setting}
              onCancel={() => setFormOpen(false)}
              onDone={async () => {
                setFormOpen(false);
                await props.reload();
              }}
            />
          ) : (
            <button type="button" onClick={() => setFormOpen(true)}>
              Change…
            </button>
          )}
          <Requests requests={props.reach.requests} reload={props.reload} />
          {openAiTunnel(setting) === null && <ConnectorSteps url={setting.connectorUrl ?? "https://…/mcp"} />}
          <ConfirmButton
            label="Turn off…"
            danger
            question="Turn off reach from the web? The tunnel's port closes and every remote token is revoked at once."
            confirmLabel="Turn off"
            keepLabel="Keep on"
            onConfirm={turnOff}
          />
        </>
      )}
      <ErrorLine error={error} />
    </div>
  );
}

/** A value to give the assistant's settings, with Copy. */
function CopyRow(props: { label: string; value: string; testId: string; copied: boolean; onCopy: () => Promise<void> }) {
  return (
    <div className="row">
      <span>{props.label}</span>
      <code className="mono" data-testid={props.testId}>
        {props.value}
      </code>
      <button type="button" onClick={() => void props.onCopy()}>
        Copy
      </button>
      <span className="muted" role="status">
        {props.copied ? "Copied." : ""}
      </span>
    </div>
  );
}

/** The ID of the OpenAI Secure MCP Tunnel the setting uses; `null` with any other tunnel. */
function openAiTunnel(setting: ReachSettingDto): string | null {
  const choice = setting.tunnel?.choice;
  return choice?.kind === "openai" ? (choice.name ?? "") : null;
}

/** What is exposed, the connector URL with Copy (or, with OpenAI's tunnel, how ChatGPT picks
 * it), and the tunnel: the one Sluice runs, with its state, or where the user's own must forward. */
function OnPanel({ setting, remoteTokens }: { setting: ReachSettingDto; remoteTokens: number }) {
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const names = setting.projects.map((p) => (p.name === null ? "(removed project)" : visible(p.name)));
  const tunnelId = openAiTunnel(setting);
  // OpenAI's tunnel has an address, but not one to give ChatGPT: its ID is what to copy.
  const url = tunnelId ?? setting.connectorUrl;
  const copy = async () => {
    if (url === null) return;
    try {
      await api.copy(url, false);
      setCopied(true);
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  return (
    <>
      <p data-testid="reach-status">
        <strong>On.</strong> {tunnelId === null ? "Assistants you approve" : "ChatGPT connectors using the tunnel"}{" "}
        {setting.write ? "may read, change files and run what each project allows" : "may only read"}{" "}
        in {names.join(", ")}. Commands in &quot;any&quot; mode are never exposed.
      </p>
      {tunnelId !== null ? (
        <div data-testid="reach-openai-steps">
          <CopyRow label="Tunnel ID" value={visible(tunnelId)} testId="reach-tunnel-id" copied={copied} onCopy={copy} />
          <p>
            In ChatGPT: Settings → Connectors → add a connector, choose this tunnel, and &quot;No
            authentication&quot;. The tunnel&apos;s key is the authentication: only connectors of your
            OpenAI organisation that may use the tunnel reach it.
          </p>
        </div>
      ) : url === null ? (
        <p data-testid="reach-connector-url">Waiting for the tunnel to announce its public address…</p>
      ) : (
        <CopyRow label="Connector URL" value={url} testId="reach-connector-url" copied={copied} onCopy={copy} />
      )}
      <ErrorLine error={error} />
      {setting.tunnel === null ? (
        <p className="muted">
          Your tunnel must forward <Text mono>{setting.publicUrl ?? ""}</Text> to{" "}
          <Text mono>{`http://127.0.0.1:${setting.port}`}</Text>, e.g.{" "}
          <Text mono>{`cloudflared tunnel run --url http://127.0.0.1:${setting.port} my-tunnel`}</Text> or{" "}
          <Text mono>{`tailscale funnel ${setting.port}`}</Text>.
        </p>
      ) : (
        <TunnelLine tunnel={setting.tunnel} />
      )}
      <p className="muted" data-testid="reach-remote-tokens">
        {remoteTokens === 0
          ? "No assistant is connected yet."
          : `${remoteTokens} remote ${remoteTokens === 1 ? "token" : "tokens"} live (marked "remote" under Tokens).`}
      </p>
    </>
  );
}

/** The tunnel Sluice runs, as its supervisor last recorded it; its output is shown as text. */
function TunnelLine({ tunnel }: { tunnel: TunnelDto }) {
  const state =
    tunnel.state === null
      ? "not started: Sluice starts it while its tray or `sluice serve` runs"
      : `${tunnel.state}${tunnel.restarts > 0 ? `, started again ${tunnel.restarts}×` : ""}`;
  return (
    <p className="muted" data-testid="reach-tunnel">
      Sluice runs <Text>{tunnel.name}</Text>: {state}.
      {tunnel.message !== null && (
        <>
          {" "}
          Last said: <Text mono>{tunnel.message}</Text>
        </>
      )}
    </p>
  );
}

/** How to add the connector in each hosted assistant (as the README says). */
function ConnectorSteps({ url }: { url: string }) {
  return (
    <div data-testid="reach-steps">
      <h3>Add the connector</h3>
      <ul>
        <li>
          <strong>Claude.ai:</strong> Settings → Connectors → Add custom connector, URL{" "}
          <Text mono>{url}</Text>; no client id or secret (Claude registers itself).
        </li>
        <li>
          <strong>ChatGPT:</strong> Settings → Apps → Advanced → Developer mode, then Create app with
          the MCP URL <Text mono>{url}</Text> and OAuth; ChatGPT registers itself.
        </li>
      </ul>
      <p className="muted">
        The assistant then opens Sluice&apos;s page in your browser, which shows a code; approve the
        request above whose code matches. The page itself cannot approve anything.
      </p>
    </div>
  );
}

/** The connection requests waiting, each with its code; expired ones drop out. */
function Requests({ requests, reload }: { requests: ConnectionRequestDto[]; reload: () => Promise<void> }) {
  const now = useNow(1000);
  const waiting = requests.filter((r) => r.expiresMs > now);
  return (
    <div aria-label="Connection requests" role="group">
      <h3>Connection requests</h3>
      {waiting.length === 0 ? (
        <p className="muted" data-testid="reach-no-requests">
          No assistant is asking to connect.
        </p>
      ) : (
        waiting.map((r) => <RequestCard key={r.id} request={r} now={now} reload={reload} />)
      )}
    </div>
  );
}

/** Who asks, as one line: a verified client with its metadata document's host, a registered
 * name quoted and marked unverified (it is only the client's own claim). */
function identityLabel(r: ConnectionRequestDto): string {
  return r.verifiedHost === null
    ? `“${visible(r.clientName)}” (unverified name)`
    : `${visible(r.clientName)} (verified: ${visible(r.verifiedHost)})`;
}

function RequestCard(props: {
  request: ConnectionRequestDto;
  now: number;
  reload: () => Promise<void>;
}) {
  const r = props.request;
  const [armed, setArmed] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // Inert for a moment after it appears, like an approval card (AP-06); it does not take the
  // focus, which may be in another setting's field.
  useEffect(() => {
    const t = setTimeout(() => setArmed(true), INERT_MS);
    return () => clearTimeout(t);
  }, []);
  const decide = async (approve: boolean) => {
    if (!armed || busy) return;
    setBusy(true);
    try {
      await api.reachDecide(r.id, approve);
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
    await props.reload();
  };
  const left = r.expiresMs - props.now;
  return (
    <article
      className="card connection-request"
      aria-label={`Connection request from ${identityLabel(r)}`}
      data-testid="reach-request"
      data-armed={armed ? "true" : "false"}
      onKeyDown={(e) => {
        if (e.key === "Escape" && !r.tampered) {
          e.preventDefault();
          void decide(false);
        }
      }}
    >
      <p className="reach-code" data-testid="reach-code">
        <span className="muted">Code </span>
        <Text mono>{r.code}</Text>
      </p>
      <h4>
        {r.verifiedHost === null ? (
          <>
            “<Text>{r.clientName}</Text>”{" "}
            <span className="muted" data-testid="reach-identity">
              (unverified name)
            </span>
          </>
        ) : (
          <>
            <Text>{r.clientName}</Text>{" "}
            <span className="muted" data-testid="reach-identity">
              (verified: <Text mono>{r.verifiedHost}</Text>)
            </span>
          </>
        )}{" "}
        asks to connect
      </h4>
      {r.verifiedHost === null && (
        <p className="muted">
          This is the name the client registered itself under; nothing checked it, and anyone can register any
          name.
        </p>
      )}
      <p className="muted">
        Returns to <Text mono>{r.redirectHost}</Text> · asked <Time ms={r.createdMs} /> ·{" "}
        <span title={`Expires at ${exactTime(r.expiresMs)}; unanswered, nothing is granted`}>
          expires in {countdown(left)}
        </span>
      </p>
      {r.tampered ? (
        <p className="error">Changed outside Sluice: it cannot be approved, and counts as denied.</p>
      ) : (
        <>
          <p>Approve only if the page in your browser shows this code.</p>
          <div className="row">
            <button
              type="button"
              className="danger"
              aria-disabled={!armed || busy}
              onClick={() => void decide(false)}
            >
              Deny
            </button>
            <button type="button" aria-disabled={!armed || busy} onClick={() => void decide(true)}>
              Approve…
            </button>
          </div>
        </>
      )}
      <ErrorLine error={error} />
    </article>
  );
}

// The form that turns reach from the web on, or changes it while on (filled in with the
// setting): the tunnel (the user's own, or one Sluice runs), the fields that tunnel takes, the
// projects, read-only or writes, and the tunnel's port. What it sends goes through `reach_on`,
// where the engine checks it and Sluice asks in a native dialog before anything widens.
//
// OpenAI's Secure MCP Tunnel takes no URL and no port (Sluice polls OpenAI; nothing listens):
// its ID and API key. The key is never filled in nor shown back; on a change of a setting that
// already uses the same tunnel, leaving it empty keeps the one Sluice saved.

import { useState } from "react";
import { api } from "../api";
import { DEFAULT_REACH_PORT } from "../bindings/ipc";
import type { ProjectDto, ReachSettingDto, TunnelChoiceDto } from "../bindings/ipc";
import { FormActions, Text, errorMessage } from "../components";

/** "own": the user runs the tunnel; else the kind of tunnel Sluice runs. */
type Kind = "own" | TunnelChoiceDto["kind"];

/** Each choice: its label, one line on what it means, and whether it takes the public URL. */
const CHOICES: { kind: Kind; label: string; hint: string; url: "required" | "optional" | "none" }[] = [
  {
    kind: "own",
    label: "A tunnel I run myself",
    hint: "cloudflared, Tailscale Funnel or another, forwarding to the tunnel port below",
    url: "required",
  },
  {
    kind: "cloudflared",
    label: "Cloudflare quick tunnel (address changes every run)",
    hint: "no account; its address changes every time it starts, and connectors added with the old one stop working",
    url: "none",
  },
  {
    kind: "cloudflared-named",
    label: "Cloudflare named tunnel",
    hint: "a tunnel you created with cloudflared, on your own hostname: a stable address",
    url: "required",
  },
  {
    kind: "tailscale",
    label: "Tailscale Funnel",
    hint: "this computer's ts.net address, with Funnel enabled for your tailnet",
    url: "none",
  },
  {
    kind: "ngrok",
    label: "ngrok",
    hint: "the address ngrok gives, or your reserved domain as the public URL",
    url: "optional",
  },
  {
    kind: "openai",
    label: "OpenAI Secure MCP Tunnel",
    hint: "for ChatGPT only: Sluice asks OpenAI for the connector's requests, and nothing listens on this computer",
    url: "none",
  },
  {
    kind: "command",
    label: "My own command",
    hint: "another tunnel program; the first https:// address it prints is the public one, unless you give it",
    url: "optional",
  },
];

export function ReachForm(props: {
  projects: ProjectDto[];
  /** The setting to change; `null` turns reach on. */
  initial: ReachSettingDto | null;
  onCancel: () => void;
  onDone: () => Promise<void>;
}) {
  const initial = props.initial;
  const was = initial?.tunnel?.choice ?? null;
  const [kind, setKind] = useState<Kind>(was?.kind ?? "own");
  // OpenAI's tunnel has a fixed address, not one the user gave: a change starts with none.
  const [url, setUrl] = useState(was?.kind === "openai" ? "" : (initial?.givenUrl ?? ""));
  const [name, setName] = useState(was?.kind === "cloudflared-named" ? (was.name ?? "") : "");
  const [tunnelId, setTunnelId] = useState(was?.kind === "openai" ? (was.name ?? "") : "");
  // Never filled in: Sluice does not hand the saved key back.
  const [apiKey, setApiKey] = useState("");
  const [command, setCommand] = useState(was?.command ?? "");
  const [chosen, setChosen] = useState<string[]>(
    (initial?.projects ?? []).map((p) => p.id).filter((id) => props.projects.some((p) => p.id === id)),
  );
  const [write, setWrite] = useState(initial?.write ?? false);
  const [port, setPort] = useState(String(initial?.port ?? DEFAULT_REACH_PORT));
  const [error, setError] = useState<string | null>(null);
  const choice = CHOICES.find((c) => c.kind === kind) ?? CHOICES[0];
  // A command Sluice would show as something else is not filled in (the engine withholds it).
  const retype = was?.kind === "command" && was.command === null;
  // The OpenAI tunnel the setting already uses, whose saved key an empty field keeps.
  const savedId = was?.kind === "openai" ? was.name : null;

  /** What to send, or why not (said here, before Sluice is asked). */
  const check = (): { url: string | null; tunnel: TunnelChoiceDto | null; apiKey?: string } | string => {
    const trimmed = url.trim();
    if (choice.url === "required" && trimmed === "") {
      return "Give the public URL: your tunnel's https address.";
    }
    if (choice.url !== "none" && trimmed !== "" && !trimmed.toLowerCase().startsWith("https://")) {
      return "The public URL must start with https:// (hosted assistants only call HTTPS).";
    }
    if (kind === "cloudflared-named" && name.trim() === "") return "Give the named tunnel's name.";
    if (kind === "command" && command.trim() === "") return "Give the command that runs your tunnel.";
    if (kind === "openai") {
      const id = tunnelId.trim();
      const key = apiKey.trim();
      if (id === "") return "Give the tunnel's ID (tunnel_…).";
      if (!/^[A-Za-z0-9_-]{1,128}$/.test(id)) {
        return "A tunnel ID is 1–128 letters, digits, _ or - (tunnel_…).";
      }
      if (key === "" && id !== savedId) {
        return "Give the tunnel's API key (platform.openai.com → Settings → API keys).";
      }
      const tunnel = { kind, name: id, command: null };
      return key === "" ? { url: null, tunnel } : { url: null, tunnel, apiKey: key };
    }
    return {
      url: choice.url === "none" || trimmed === "" ? null : trimmed,
      tunnel:
        kind === "own"
          ? null
          : {
              kind,
              name: kind === "cloudflared-named" ? name.trim() : null,
              command: kind === "command" ? command : null,
            },
    };
  };

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const checked = check();
    if (typeof checked === "string") {
      setError(checked);
      return;
    }
    if (chosen.length === 0) {
      setError("Choose at least one project to expose.");
      return;
    }
    // OpenAI's tunnel opens no port: the engine's default stands.
    const n = kind === "openai" ? null : Number(port);
    if (n !== null && (!Number.isInteger(n) || n < 1 || n > 65535)) {
      setError("The tunnel's port must be a number from 1 to 65535.");
      return;
    }
    try {
      // Redirect URIs are set from the CLI; a change keeps them.
      await api.reachOn({ ...checked, projects: chosen, write, port: n, redirects: initial?.redirects ?? null });
      setError(null);
      await props.onDone();
    } catch (err) {
      setError(errorMessage(err));
    }
  };

  const title = initial === null ? "Turn on reach from the web" : "Change reach from the web";
  return (
    <form className="card sheet" aria-label={title} onSubmit={submit}>
      <fieldset className="modes">
        <legend>Tunnel</legend>
        {CHOICES.map((c) => (
          <label key={c.kind}>
            <input
              type="radio"
              name="reach-tunnel"
              value={c.kind}
              checked={kind === c.kind}
              onChange={() => setKind(c.kind)}
              autoFocus={kind === c.kind}
            />{" "}
            {c.label} <span className="muted">— {c.hint}</span>
          </label>
        ))}
      </fieldset>
      {kind === "cloudflared" && (
        <p className="muted" role="note" data-testid="reach-quick-note">
          A quick tunnel gets a new hostname every time it starts (when Sluice starts, or the tunnel
          restarts). Each time, connectors added with the old address stop working until you add
          them again; for a stable address use a named tunnel.
        </p>
      )}
      {kind === "cloudflared-named" && (
        <label>
          Tunnel name <span className="muted">(as in cloudflared tunnel run NAME)</span>
          <input name="reach-tunnel-name" value={name} onChange={(e) => setName(e.target.value)} />
        </label>
      )}
      {kind === "openai" && (
        <>
          <label>
            Tunnel ID <span className="muted">(tunnel_…, as OpenAI shows it)</span>
            <input
              name="reach-openai-tunnel"
              className="mono"
              value={tunnelId}
              onChange={(e) => setTunnelId(e.target.value)}
              placeholder="tunnel_…"
              spellCheck={false}
            />
          </label>
          <label>
            API key
            <input
              type="password"
              name="reach-openai-key"
              className="mono"
              autoComplete="off"
              spellCheck={false}
              value={apiKey}
              onChange={(e) => setApiKey(e.target.value)}
              aria-describedby="reach-openai-key-hint"
            />
            <span className="muted" id="reach-openai-key-hint">
              The tunnel&apos;s key, from platform.openai.com → Settings → API keys. Sluice keeps it
              encrypted and never shows it again.
              {savedId !== null && (
                <>
                  {" "}
                  Leave it empty to keep the key Sluice saved for <Text mono>{savedId}</Text>.
                </>
              )}
            </span>
          </label>
        </>
      )}
      {kind === "command" && (
        <label>
          Command
          <input
            name="reach-tunnel-command"
            className="mono"
            value={command}
            onChange={(e) => setCommand(e.target.value)}
            placeholder="my-tunnel --to http://127.0.0.1:{port}"
            aria-describedby="reach-command-hint"
          />
          <span className="muted" id="reach-command-hint">
            <Text mono>{"{port}"}</Text> is replaced by the tunnel port. Quotes group words as in a
            shell, but no shell runs it; the program is found on your PATH (or give its full path),
            never inside a project.
            {retype && " Type it again: it held characters Sluice shows differently."}
          </span>
        </label>
      )}
      {choice.url !== "none" && (
        <label>
          Public URL{" "}
          <span className="muted">
            {choice.url === "required"
              ? "(your tunnel's https address, without a path)"
              : "(optional; https://…, without a path)"}
          </span>
          <input
            name="reach-url"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
            placeholder="https://sluice.example.com"
          />
        </label>
      )}
      <fieldset className="modes">
        <legend>Projects to expose</legend>
        {props.projects.length === 0 && <p className="muted">Authorize a project first.</p>}
        {props.projects.map((p) => (
          <label key={p.id}>
            <input
              type="checkbox"
              name="reach-project"
              value={p.id}
              checked={chosen.includes(p.id)}
              onChange={(e) =>
                setChosen(e.target.checked ? [...chosen, p.id] : chosen.filter((c) => c !== p.id))
              }
            />{" "}
            <Text>{p.name}</Text>
          </label>
        ))}
      </fieldset>
      <fieldset className="modes">
        <legend>Remote assistants may</legend>
        <label>
          <input type="radio" name="reach-access" value="read-only" checked={!write} onChange={() => setWrite(false)} />{" "}
          Read-only (suggested) — look, but not change anything
        </label>
        <label>
          <input type="radio" name="reach-access" value="read-write" checked={write} onChange={() => setWrite(true)} />{" "}
          Read and write — change files and run what each project allows; never commands in
          &quot;any&quot; mode
        </label>
      </fieldset>
      {kind !== "openai" && (
        <label>
          Tunnel port <span className="muted">(on this computer; not the local clients&apos; port)</span>
          <input name="reach-port" inputMode="numeric" value={port} onChange={(e) => setPort(e.target.value)} />
        </label>
      )}
      <FormActions error={error} submit={initial === null ? "Turn on" : "Change"} onCancel={props.onCancel} />
    </form>
  );
}

// Tokens: create (label, scope, profile, expiry) → the token shown once with per-client
// snippets; the list with profile and last use; change a profile (widening asks natively);
// revoke; restore a token whose assistant limited itself.

import { useState } from "react";
import { CLIPBOARD_CLEAR_MS, api } from "../api";
import { PROFILES } from "../bindings/ipc";
import type { CreatedToken, Profile, ProjectDto, TokenDto } from "../bindings/ipc";
import { ConfirmButton, ErrorLine, FormActions, Text, Time, errorMessage } from "../components";
import { visible } from "../format";

export function TokensView(props: {
  tokens: TokenDto[];
  projects: ProjectDto[];
  formOpen: boolean;
  setFormOpen: (open: boolean) => void;
  reload: () => Promise<void>;
}) {
  const [created, setCreated] = useState<CreatedToken | null>(null);
  const [error, setError] = useState<string | null>(null);
  // A row's action: its refusal is shown above the list, a success clears it.
  const act = (f: () => Promise<unknown>) => async () => {
    try {
      await f();
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  return (
    <section aria-label="Tokens">
      <div className="section-head">
        <h1>Tokens</h1>
        <button
          type="button"
          className="primary"
          onClick={() => {
            setCreated(null);
            props.setFormOpen(true);
          }}
        >
          New token
        </button>
      </div>
      {props.formOpen && !created && (
        <NewTokenForm
          projects={props.projects}
          onCancel={() => props.setFormOpen(false)}
          onCreated={(c) => {
            setCreated(c);
            props.setFormOpen(false);
            void props.reload();
          }}
        />
      )}
      {created && <CreatedPanel created={created} onDone={() => setCreated(null)} />}
      <ErrorLine error={error} />
      {props.tokens.length === 0 ? (
        <p className="muted">No tokens yet. Create one for each assistant you connect.</p>
      ) : (
        <table className="list">
          <thead>
            <tr>
              <th>Label</th>
              <th>Scope</th>
              <th>Profile</th>
              <th>Created</th>
              <th>Last used</th>
              <th>Expires</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {props.tokens.map((t) => (
              <tr key={t.id} data-testid="token-row">
                <td>
                  <Text>{t.label}</Text>
                  {t.remote && (
                    <span
                      className="badge neutral"
                      data-testid="token-remote"
                      title="Issued to a hosted assistant through reach from the web; turning reach off revokes it"
                    >
                      remote
                    </span>
                  )}
                </td>
                <td>
                  {t.scope === null
                    ? "All projects"
                    : t.scope.map((s) => (s.name === null ? "(removed project)" : visible(s.name))).join(", ") || "No projects"}
                </td>
                <td>
                  {t.revokedMs === null && !t.remote ? (
                    <ProfileSelect
                      label={`Profile of ${visible(t.label)}`}
                      value={t.profile}
                      onChange={(p) =>
                        act(async () => {
                          await api.setTokenProfile(t.id, p);
                          await props.reload();
                        })()
                      }
                    />
                  ) : (
                    <span data-testid="token-profile">{t.profile}</span>
                  )}
                </td>
                <td>
                  <Time ms={t.createdMs} />
                </td>
                <td data-testid="token-last-used">
                  <Time ms={t.lastUsedMs} />
                </td>
                <td>
                  <Time ms={t.expiresMs} />
                </td>
                <td>
                  {t.revokedMs === null && t.selfLimit !== null && (
                    <span className="self-limit" data-testid="token-self-limit">
                      <span className="badge" title="The assistant lowered its own access (drop_privileges)">
                        {t.selfLimit === "paused" ? "Paused itself" : "Read-only by its own choice"}
                      </span>{" "}
                      <button type="button" onClick={act(() => api.restoreToken(t.id))}>
                        Restore…
                      </button>{" "}
                    </span>
                  )}
                  {t.revokedMs !== null ? (
                    <span className="muted">Revoked</span>
                  ) : (
                    <ConfirmButton
                      label="Revoke…"
                      danger
                      question={`Revoke ${visible(t.label)}? Clients using it are refused at once.`}
                      confirmLabel="Revoke"
                      onConfirm={act(() => api.revokeToken(t.id))}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** A profile as a select: each option says what the token may do. */
function ProfileSelect(props: { label: string; value: Profile; onChange: (p: Profile) => void }) {
  return (
    <select
      aria-label={props.label}
      value={props.value}
      onChange={(e) => props.onChange(e.target.value as Profile)}
    >
      {PROFILES.map((p) => (
        <option key={p.profile} value={p.profile}>
          {p.profile} — {p.describe}
        </option>
      ))}
    </select>
  );
}

const EXPIRY: { label: string; days: number | null }[] = [
  { label: "Never", days: null },
  { label: "30 days", days: 30 },
  { label: "90 days", days: 90 },
  { label: "1 year", days: 365 },
];

function NewTokenForm(props: {
  projects: ProjectDto[];
  onCancel: () => void;
  onCreated: (c: CreatedToken) => void;
}) {
  const [label, setLabel] = useState("");
  const [allProjects, setAllProjects] = useState(true);
  const [chosen, setChosen] = useState<string[]>([]);
  const [expiry, setExpiry] = useState<number | null>(null);
  // Review is the safe start, as on the command line; the user picks more.
  const [profile, setProfile] = useState<Profile>("review");
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    try {
      props.onCreated(
        await api.createToken({
          label,
          scope: allProjects ? null : chosen,
          expiresInDays: expiry,
          profile,
        }),
      );
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  return (
    <form className="card sheet" aria-label="New token" onSubmit={submit}>
      <h2>New token</h2>
      <label>
        Label <span className="muted">(which assistant, on which computer)</span>
        <input
          name="label"
          value={label}
          onChange={(e) => setLabel(e.target.value)}
          placeholder="Cursor on laptop"
          maxLength={64}
          autoFocus
          required
        />
      </label>
      <fieldset className="modes">
        <legend>Projects</legend>
        <label>
          <input type="radio" name="scope" checked={allProjects} onChange={() => setAllProjects(true)} />
          All projects
        </label>
        <label>
          <input
            type="radio"
            name="scope"
            checked={!allProjects}
            onChange={() => setAllProjects(false)}
          />
          Only these:
        </label>
        {!allProjects &&
          props.projects.map((p) => (
            <label key={p.id} className="indent">
              <input
                type="checkbox"
                checked={chosen.includes(p.id)}
                onChange={(e) =>
                  setChosen(e.target.checked ? [...chosen, p.id] : chosen.filter((c) => c !== p.id))
                }
              />
              <Text>{p.name}</Text>
            </label>
          ))}
      </fieldset>
      <label>
        Profile <span className="muted">(what it may do; the projects' modes still apply)</span>
        <ProfileSelect label="Profile" value={profile} onChange={setProfile} />
      </label>
      <label>
        Expires
        <select
          name="expiry"
          value={expiry ?? ""}
          onChange={(e) => setExpiry(e.target.value === "" ? null : Number(e.target.value))}
        >
          {EXPIRY.map((x) => (
            <option key={x.label} value={x.days ?? ""}>
              {x.label}
            </option>
          ))}
        </select>
      </label>
      <FormActions error={error} submit="Create token" onCancel={props.onCancel} />
    </form>
  );
}

function CreatedPanel({ created, onDone }: { created: CreatedToken; onDone: () => void }) {
  const [tab, setTab] = useState(created.snippets[0]?.client ?? "");
  const [copied, setCopied] = useState<string | null>(null);
  const snippet = created.snippets.find((s) => s.client === tab);
  const copy = async (what: string, text: string, secret: boolean) => {
    await api.copy(text, secret);
    setCopied(what);
  };
  return (
    <section className="card result" aria-label="New token created">
      <h2>
        Token for <Text>{created.token.label}</Text>
      </h2>
      <p className="warning">
        This is the only time Sluice shows this token. Copy it into your assistant now; Sluice
        keeps only a fingerprint of it.
      </p>
      <div className="row">
        <input
          className="mono secret"
          readOnly
          value={created.secret}
          aria-label="The new token"
          data-testid="new-token"
          onFocus={(e) => e.target.select()}
        />
        <button type="button" onClick={() => copy("token", created.secret, true)}>
          Copy
        </button>
      </div>
      <p className="muted" aria-live="polite">
        {copied
          ? `Copied the ${copied}. The clipboard is cleared after ${CLIPBOARD_CLEAR_MS / 1000} seconds.`
          : `Copied text is cleared from the clipboard after ${CLIPBOARD_CLEAR_MS / 1000} seconds.`}
      </p>
      <div role="tablist" aria-label="Client setup" className="tabs">
        {created.snippets.map((s) => (
          <button
            key={s.client}
            type="button"
            role="tab"
            aria-selected={s.client === tab}
            onClick={() => setTab(s.client)}
          >
            {s.title}
          </button>
        ))}
      </div>
      {snippet && (
        <div role="tabpanel" aria-label={snippet.title}>
          <p className="muted">
            Where: <Text>{snippet.target}</Text>
          </p>
          {snippet.plainText ? (
            <p className="warning" data-testid="snippet-plain-text">
              Set up this way, {snippet.title} keeps the token in plain text in its settings.
            </p>
          ) : (
            <p className="muted">The token does not go into {snippet.title}'s settings file.</p>
          )}
          {snippet.note && (
            <p className="muted">
              <Text>{snippet.note}</Text>
            </p>
          )}
          <pre className="snippet">
            <Text>{snippet.text}</Text>
          </pre>
          <button type="button" onClick={() => copy(`${snippet.title} setup`, snippet.text, snippet.holdsToken)}>
            Copy {snippet.title} setup
          </button>
          {snippet.link && (
            <>
              <button type="button" onClick={() => copy(`${snippet.title} install link`, snippet.link ?? "", false)}>
                Copy {snippet.title} install link
              </button>
              <p className="muted">The link installs exactly this:</p>
              <pre className="snippet" aria-label={`What the ${snippet.title} install link installs`}>
                <Text>{snippet.linkInstalls ?? ""}</Text>
              </pre>
            </>
          )}
        </div>
      )}
      <div className="row">
        <button type="button" className="primary" onClick={onDone}>
          Done
        </button>
      </div>
    </section>
  );
}

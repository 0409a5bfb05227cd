// Projects: the authorized folders, authorizing a new one (native picker or a typed path),
// modes, the sensitive-file shield, the auto-run list, the commands' sandbox, and disable /
// enable / remove.

import { useEffect, useState } from "react";
import { api } from "../api";
import type {
  Access,
  AllowRuleDto,
  Channel,
  Exec,
  Net,
  ProjectDto,
} from "../bindings/ipc";
import { AddField, ConfirmButton, ErrorLine, FormActions, Text, Time, errorMessage } from "../components";
import { visible } from "../format";
import { AutoRunEditor } from "./AutoRun";
import { CheckpointsEditor } from "./Checkpoints";
import { GitEmailsEditor, GitHooksEditor } from "./Git";
import { SandboxEditor } from "./Sandbox";

export const ACCESS: { value: Access; label: string; hint: string }[] = [
  { value: "read-only", label: "Read-only", hint: "The assistant can look but not change anything." },
  {
    value: "read-write",
    label: "Read-write",
    hint: "The assistant can create and edit files; deletions ask you first.",
  },
];

export const EXEC: { value: Exec; label: string; hint: string; needsWrite: boolean }[] = [
  { value: "off", label: "Off", hint: "Nothing runs.", needsWrite: false },
  {
    value: "safe",
    label: "Safe",
    hint: "Version checks and read-only inspections only.",
    needsWrite: false,
  },
  {
    value: "project",
    label: "Project",
    hint: "The project's own build, test and run commands.",
    needsWrite: true,
  },
  {
    value: "any",
    label: "Any",
    hint: "Any command; each run asks you unless an allow rule matches.",
    needsWrite: true,
  },
];

const STATUS: Record<ProjectDto["status"], string> = {
  available: "Available",
  disabled: "Disabled",
  "root-lost": "Folder lost",
};

export function ProjectsView(props: {
  projects: ProjectDto[];
  authorizeOpen: boolean;
  setAuthorizeOpen: (open: boolean) => void;
  reload: () => Promise<void>;
  /** Approvals waiting, per project id. */
  waiting?: Record<string, number>;
  openApprovals?: () => void;
}) {
  const [selected, setSelected] = useState<string | null>(null);
  const project = props.projects.find((p) => p.id === selected) ?? null;
  const rows = underParents(props.projects);
  return (
    <section aria-label="Projects">
      <div className="section-head">
        <h1>Projects</h1>
        <button type="button" className="primary" onClick={() => props.setAuthorizeOpen(true)}>
          Authorize project…
        </button>
      </div>
      {props.authorizeOpen && (
        <AuthorizeSheet
          onClose={() => props.setAuthorizeOpen(false)}
          onAdded={async (p) => {
            props.setAuthorizeOpen(false);
            await props.reload();
            setSelected(p.id);
          }}
        />
      )}
      {props.projects.length === 0 ? (
        <p className="muted">No folders are authorized yet. Assistants see nothing until you add one.</p>
      ) : (
        <table className="list">
          <thead>
            <tr>
              <th>Name</th>
              <th>Status</th>
              <th>Access</th>
              <th>Execution</th>
              <th>Network</th>
              <th>Approvals</th>
              <th>Folder</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((p) => (
              <tr key={p.id} aria-selected={p.id === selected} data-testid="project-row">
                <td className={p.worktreeOf ? "worktree" : undefined}>
                  {p.worktreeOf && (
                    <span className="muted" aria-hidden="true">
                      ↳{" "}
                    </span>
                  )}
                  <button type="button" className="link" onClick={() => setSelected(p.id)}>
                    <Text>{p.name}</Text>
                  </button>
                  {p.worktreeOf && <span className="muted"> · worktree</span>}
                </td>
                <td className={`status-${p.status}`}>{STATUS[p.status]}</td>
                <td>{ACCESS.find((a) => a.value === p.access)?.label}</td>
                <td>{EXEC.find((x) => x.value === p.exec)?.label}</td>
                <td data-testid="project-network">{networkLine(p)}</td>
                <td data-testid="project-waiting">
                  <Waiting count={props.waiting?.[p.id] ?? 0} open={props.openApprovals} />
                </td>
                <td>
                  <Text mono>{p.root}</Text>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {project && (
        <ProjectDetail
          key={project.id}
          project={project}
          parent={props.projects.find((p) => p.id === project.worktreeOf) ?? null}
          onRemoved={() => setSelected(null)}
        />
      )}
    </section>
  );
}

/** "2 waiting" (opening the Approvals view), or a dash when nothing waits. */
function Waiting({ count, open }: { count: number; open?: () => void }) {
  if (count === 0) return <span className="muted">—</span>;
  const label = `${count} waiting`;
  return open ? (
    <button type="button" className="link" onClick={open} title="Open Approvals">
      {label}
    </button>
  ) : (
    <>{label}</>
  );
}

function AuthorizeSheet(props: { onClose: () => void; onAdded: (p: ProjectDto) => Promise<void> }) {
  const [path, setPath] = useState("");
  const [name, setName] = useState("");
  const [access, setAccess] = useState<Access>("read-only");
  const [exec, setExec] = useState<Exec>("off");
  const [error, setError] = useState<string | null>(null);

  const pick = async () => {
    try {
      const picked = await api.pickFolder();
      if (picked) setPath(picked);
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    try {
      const p = await api.addProject({ path, name: name.trim() || null, access, exec });
      await props.onAdded(p);
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  return (
    <form className="card sheet" aria-label="Authorize a folder" onSubmit={submit}>
      <h2>Authorize a folder</h2>
      <label>
        Folder
        <span className="row">
          <input
            name="path"
            value={path}
            onChange={(e) => setPath(e.target.value)}
            placeholder="/home/you/code/my-app"
            spellCheck={false}
            autoFocus
            required
          />
          <button type="button" onClick={pick}>
            Choose…
          </button>
        </span>
      </label>
      <label>
        Name <span className="muted">(optional; the folder's name by default)</span>
        <input name="name" value={name} onChange={(e) => setName(e.target.value)} maxLength={64} />
      </label>
      <ModeChoice
        legend="Access"
        name="access"
        options={ACCESS}
        value={access}
        onChange={(a) => {
          setAccess(a);
          if (a === "read-only" && EXEC.find((x) => x.value === exec)?.needsWrite) setExec("off");
        }}
      />
      <ModeChoice
        legend="Execution"
        name="exec"
        options={EXEC.map((x) => ({ ...x, disabled: x.needsWrite && access === "read-only" }))}
        value={exec}
        onChange={setExec}
      />
      <FormActions error={error} submit="Authorize" onCancel={props.onClose} />
    </form>
  );
}

function ModeChoice<T extends string>(props: {
  legend: string;
  name: string;
  options: { value: T; label: string; hint: string; disabled?: boolean }[];
  value: T;
  onChange: (v: T) => void;
}) {
  return (
    <fieldset className="modes">
      <legend>{props.legend}</legend>
      {props.options.map((o) => (
        <label key={o.value} className={o.disabled ? "disabled" : ""}>
          <input
            type="radio"
            name={props.name}
            value={o.value}
            checked={props.value === o.value}
            disabled={o.disabled}
            onChange={() => props.onChange(o.value)}
          />
          <strong>{o.label}</strong> — <span className="muted">{o.hint}</span>
        </label>
      ))}
    </fieldset>
  );
}

/** Projects in their order, each worktree right after the project it was made from. */
function underParents(projects: ProjectDto[]): ProjectDto[] {
  const ids = new Set(projects.map((p) => p.id));
  const out: ProjectDto[] = [];
  for (const p of projects) {
    if (p.worktreeOf && ids.has(p.worktreeOf)) continue;
    out.push(p, ...projects.filter((w) => w.worktreeOf === p.id));
  }
  return out;
}

function ProjectDetail({
  project,
  parent,
  onRemoved,
}: {
  project: ProjectDto;
  parent: ProjectDto | null;
  onRemoved: () => void;
}) {
  const [error, setError] = useState<string | null>(null);
  const run = async (f: () => Promise<unknown>) => {
    try {
      await f();
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  return (
    <section className="card detail" aria-label={`Project ${visible(project.name)}`}>
      <h2>
        <Text>{project.name}</Text>
      </h2>
      <p>
        <Text mono>{project.root}</Text>
      </p>
      {parent && (
        <p className="muted" data-testid="worktree-of">
          A git worktree of <Text>{parent.name}</Text>, made by an assistant: it never allows more
          than <Text>{parent.name}</Text> does.
        </p>
      )}
      {project.reason && (
        <p className="warning">
          <Text>{project.reason}</Text>
        </p>
      )}
      <ModeChoice
        legend="Access"
        name={`access-${project.id}`}
        options={ACCESS}
        value={project.access}
        onChange={(access) => run(() => api.setProjectModes({ id: project.id, access, exec: null }))}
      />
      <ModeChoice
        legend="Execution"
        name={`exec-${project.id}`}
        options={EXEC.map((x) => ({
          ...x,
          disabled: x.needsWrite && project.access === "read-only",
        }))}
        value={project.exec}
        onChange={(exec) => run(() => api.setProjectModes({ id: project.id, access: null, exec }))}
      />
      <NetworkEditor
        project={project}
        onChange={(network) => run(() => api.setProjectNetwork({ id: project.id, network }))}
      />
      {project.access === "read-write" && (
        <PolicyEditor
          project={project}
          onChange={(askDeletes, askWrites) =>
            run(() => api.setProjectPolicy({ id: project.id, askDeletes, askWrites }))
          }
        />
      )}
      <GitEmailsEditor project={project} onError={setError} />
      {project.access === "read-write" && (
        <GitHooksEditor project={project} onError={setError} />
      )}
      <CheckpointsEditor project={project} onError={setError} />
      <ShieldEditor project={project} onError={setError} />
      <AutoRunEditor project={project} onError={setError} />
      <SandboxEditor project={project} onError={setError} />
      <AllowRules project={project} onError={setError} />
      <ErrorLine error={error} />
      <div className="row">
        {project.status === "available" ? (
          <ConfirmButton
            label="Disable"
            question={`Disable ${visible(project.name)}? Assistants lose access until you enable it.`}
            confirmLabel="Disable"
            onConfirm={() => run(() => api.setProjectEnabled(project.id, false))}
          />
        ) : (
          <button type="button" onClick={() => run(() => api.setProjectEnabled(project.id, true))}>
            Enable
          </button>
        )}
        <ConfirmButton
          label="Remove…"
          danger
          question={
            project.worktreeOf
              ? `Remove the worktree ${visible(project.name)}? Its folder is deleted (it must have no uncommitted changes); its branch stays in the repository.`
              : `Remove ${visible(project.name)}? The folder stays; Sluice forgets it.`
          }
          confirmLabel="Remove"
          onConfirm={() =>
            run(async () => {
              await api.removeProject(project.id);
              onRemoved();
            })
          }
        />
      </div>
    </section>
  );
}

function ShieldEditor({
  project,
  onError,
}: {
  project: ProjectDto;
  onError: (e: string | null) => void;
}) {
  const [defaults, setDefaults] = useState<string[]>([]);
  useEffect(() => {
    api.defaultShield().then(setDefaults, (e) => onError(errorMessage(e)));
  }, [onError]);
  const patterns = project.shield ?? defaults;
  const save = async (next: string[] | null) => {
    try {
      await api.setShield(project.id, next);
      onError(null);
    } catch (e) {
      onError(errorMessage(e));
    }
  };
  return (
    <fieldset className="shield">
      <legend>Sensitive files</legend>
      <p className="muted">
        Assistants never see files matching these patterns
        {project.shield === null ? " (the defaults)." : " (your own list)."}
      </p>
      <ul>
        {patterns.map((p) => (
          <li key={p}>
            <Text mono>{p}</Text>{" "}
            <button
              type="button"
              className="small"
              aria-label={`Stop shielding ${visible(p)}`}
              onClick={() => save(patterns.filter((x) => x !== p))}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      <AddField
        label="New pattern"
        placeholder="secrets/**"
        button="Add pattern"
        add={async (p) => {
          await save([...patterns, p]);
          return true;
        }}
      >
        {project.shield !== null && (
          <button type="button" onClick={() => save(null)}>
            Restore defaults
          </button>
        )}
      </AddField>
    </fieldset>
  );
}

/** The exact commands this project runs without asking, each granted by "Always allow this
 * command" on an approval; removing one makes that command ask again. */
function AllowRules({
  project,
  onError,
}: {
  project: ProjectDto;
  onError: (e: string | null) => void;
}) {
  const [rules, setRules] = useState<AllowRuleDto[] | null>(null);
  useEffect(() => {
    api.listAllowRules(project.id).then(setRules, (e) => onError(errorMessage(e)));
  }, [project.id, onError]);
  if (rules === null) return null;
  const remove = async (id: number) => {
    try {
      setRules(await api.removeAllowRule(project.id, id));
      onError(null);
    } catch (e) {
      onError(errorMessage(e));
    }
  };
  return (
    <fieldset className="allow-rules" data-testid="allow-rules">
      <legend>Always allowed commands</legend>
      {rules.length === 0 ? (
        <p className="muted">
          None. Every command asks first; choose “Always allow this command” on an approval to
          run that exact command without asking.
        </p>
      ) : (
        <ul>
          {rules.map((r) => (
            <li key={r.id} data-testid="allow-rule">
              <Text mono>{r.command}</Text> <span className="muted">· added</span>{" "}
              <Time ms={r.createdMs} />
              {ruleOrigin(r) && (
                <span className="muted" data-testid="allow-rule-origin">
                  {" "}
                  <Text>{ruleOrigin(r)}</Text>
                </span>
              )}{" "}
              <button
                type="button"
                className="small"
                aria-label={`Ask again before ${visible(r.command)}`}
                onClick={() => void remove(r.id)}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
    </fieldset>
  );
}

const CHANNEL: Record<Channel, string> = {
  window: "the window",
  tray: "the tray",
  cli: "the command line",
};

/** "from the tray, asked by Cursor": who added a rule, as far as Sluice recorded it (rules
 * from before it did say nothing). */
export function ruleOrigin(r: AllowRuleDto): string {
  const parts: string[] = [];
  if (r.addedFrom !== null) parts.push(`from ${CHANNEL[r.addedFrom]}`);
  if (r.askedBy !== null) parts.push(`asked by ${r.askedBy}`);
  return parts.join(", ");
}

/** What each network setting lets a command reach, in a few words. */
export const NETWORK_REACH: Record<Net, string> = {
  off: "off",
  registries: "package registries only",
  on: "on",
};

/** "package registries only (default for this mode)", "off (set by you)". */
export function networkLine(p: ProjectDto): string {
  const state = NETWORK_REACH[p.networkMode];
  return `${state} (${p.network === null ? "default for this mode" : "set by you"})`;
}

const NETWORK: { value: Net | null; label: string }[] = [
  { value: "off", label: "Off" },
  { value: "registries", label: "Registries" },
  { value: "on", label: "On" },
  { value: null, label: "Mode default" },
];

/** Outbound network for the project's commands: off, the package registries, on, or the
 *  execution mode's default. */
function NetworkEditor(props: { project: ProjectDto; onChange: (network: Net | null) => void }) {
  const p = props.project;
  return (
    <fieldset className="policy">
      <legend>Network for commands</legend>
      <div className="row">
        <span data-testid="network-state">Network for commands: {networkLine(p)}</span>
        <span className="segmented" role="group" aria-label="Network setting">
          {NETWORK.map((n) => (
            <button
              key={n.label}
              type="button"
              aria-pressed={p.network === n.value}
              onClick={() => p.network !== n.value && props.onChange(n.value)}
            >
              {n.label}
            </button>
          ))}
        </span>
      </div>
      <p className="muted">
        Off — nothing leaves a command. Registries — only HTTPS to the package registries listed
        in Settings (crates.io, npm, PyPI…), through Sluice's proxy. On — commands may reach any
        computer. The mode default is Registries in Project mode and Off otherwise. Reaching more
        asks you in a system dialog; running commands keep their setting.
      </p>
      {p.exec === "off" && <p className="muted">Execution is off: no command runs in this project.</p>}
    </fieldset>
  );
}

/** Which changes ask first, as two Ask / Allow switches. */
function PolicyEditor(props: {
  project: ProjectDto;
  onChange: (askDeletes: boolean | null, askWrites: boolean | null) => void;
}) {
  const { askDeletes, askWrites } = props.project.policy;
  return (
    <fieldset className="policy">
      <legend>Approval policy</legend>
      <div className="row">
        <span>Deleting or moving files</span>
        <Segmented
          label="Deleting or moving files"
          ask={askDeletes}
          onChange={(ask) => props.onChange(ask, null)}
        />
      </div>
      <div className="row">
        <span>Creating or changing files</span>
        <Segmented
          label="Creating or changing files"
          ask={askWrites}
          onChange={(ask) => props.onChange(null, ask)}
        />
      </div>
      <p className="muted">
        Ask — you approve each one, in the tray or here. Allow — it runs without asking (a backup
        is kept and the activity log records it).
      </p>
    </fieldset>
  );
}

function Segmented(props: { label: string; ask: boolean; onChange: (ask: boolean) => void }) {
  return (
    <span className="segmented" role="group" aria-label={props.label}>
      <button type="button" aria-pressed={props.ask} onClick={() => !props.ask && props.onChange(true)}>
        Ask
      </button>
      <button type="button" aria-pressed={!props.ask} onClick={() => props.ask && props.onChange(false)}>
        Allow
      </button>
    </span>
  );
}

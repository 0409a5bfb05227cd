// First run: three steps instead of empty tables, each ticked when done.

import type { ProjectDto, TokenDto } from "../bindings/ipc";

export function FirstRun(props: {
  projects: ProjectDto[];
  tokens: TokenDto[];
  onAuthorize: () => void;
  onCreateToken: () => void;
  onConnect: () => void;
}) {
  const steps = [
    {
      done: props.projects.length > 0,
      title: "Authorize a project",
      hint: "Choose a folder the assistant may read. It starts read-only, with execution off.",
      action: props.onAuthorize,
      button: "Authorize project…",
    },
    {
      done: props.tokens.some((t) => t.revokedMs === null),
      title: "Create a token",
      hint: "Each assistant gets its own token, so you can see and revoke it separately.",
      action: props.onCreateToken,
      button: "New token",
    },
    {
      done: props.tokens.some((t) => t.revokedMs === null && t.lastUsedMs !== null),
      title: "Connect your assistant",
      hint: "Connect writes Sluice into your client's settings; this ticks itself once it connects.",
      action: props.onConnect,
      button: "Connect a client…",
    },
  ];
  return (
    <section className="card firstrun" aria-label="Getting started">
      <h2>Get started</h2>
      <ol>
        {steps.map((s) => (
          <li key={s.title} className={s.done ? "done" : ""}>
            <span className="tick" aria-hidden="true">
              {s.done ? "✓" : "○"}
            </span>
            <div>
              <strong>{s.title}</strong>
              {s.done && <span className="visually-hidden"> (done)</span>}
              <p className="muted">{s.hint}</p>
            </div>
            {!s.done && (
              <button type="button" onClick={s.action}>
                {s.button}
              </button>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}

// A project's git settings: whether assistants see the authors' e-mail addresses in its history
// (hidden by default, names only), and whether its commits run its git hooks (off by default;
// when on, each hook runs as a job in the project's sandbox). Widening either is confirmed
// natively by the shell first.

import { api } from "../api";
import type { ProjectDto } from "../bindings/ipc";
import { errorMessage } from "../components";

/** The project's git e-mail setting, as one toggle. */
export function GitEmailsEditor({
  project,
  onError,
}: {
  project: ProjectDto;
  onError: (e: string | null) => void;
}) {
  const save = async (show: boolean) => {
    try {
      await api.setProjectGitEmails(project.id, show);
      onError(null);
    } catch (e) {
      onError(errorMessage(e));
    }
  };
  return (
    <fieldset className="policy" aria-label="Git history">
      <legend>Git history</legend>
      <label className="row">
        <input
          type="checkbox"
          checked={project.showGitEmails}
          onChange={(e) => void save(e.target.checked)}
        />
        Show the authors&apos; e-mail addresses to assistants
      </label>
      <p className="muted">
        Off — git_log and git_show name each commit&apos;s author without an address. On — they
        give the author&apos;s e-mail address too. Turning it on asks you in a system dialog.
      </p>
    </fieldset>
  );
}

/** Whether the project's commits run its git hooks, as one toggle. */
export function GitHooksEditor({
  project,
  onError,
}: {
  project: ProjectDto;
  onError: (e: string | null) => void;
}) {
  const save = async (run: boolean) => {
    try {
      await api.setProjectGitHooks(project.id, run);
      onError(null);
    } catch (e) {
      onError(errorMessage(e));
    }
  };
  const runs = project.exec === "project" || project.exec === "any";
  return (
    <fieldset className="policy" aria-label="Git hooks">
      <legend>Git hooks</legend>
      <label className="row">
        <input
          type="checkbox"
          checked={project.runGitHooks}
          onChange={(e) => void save(e.target.checked)}
        />
        Run the repository&apos;s hooks when an assistant commits
      </label>
      <p className="muted">
        Off — git_commit runs no hook (pre-commit, commit-msg, …). On — each hook runs as a job
        in the project&apos;s sandbox, shown in Jobs, and one that fails stops the commit. Turning
        it on asks you in a system dialog.
        {project.runGitHooks && !runs && (
          <>
            {" "}
            Commits are refused while the execution mode runs no project program: choose project
            or any.
          </>
        )}
      </p>
    </fieldset>
  );
}

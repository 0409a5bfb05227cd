// Whether assistants see the authors' e-mail addresses in a project's git history: hidden by
// default, names only. Showing them is confirmed natively by the shell first.

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

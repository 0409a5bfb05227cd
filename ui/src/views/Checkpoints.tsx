// A project's checkpoints: snapshots of its files that Sluice takes before every command (and
// that the user or an assistant takes by hand), each restorable in one step. Restoring is
// confirmed natively by the shell first; it is all or nothing and can itself be undone.

import { useCallback, useEffect, useState } from "react";
import { api } from "../api";
import type { CheckpointDto, CheckpointsDto, ProjectDto } from "../bindings/ipc";
import { Text, Time, errorMessage } from "../components";
import { humanBytes, visible } from "../format";

/** What a checkpoint is, in a few words: its name, or the command it was taken before. */
function label(c: CheckpointDto): string {
  if (c.name) return c.name;
  if (c.beforeCommand) return `before ${c.beforeCommand}`;
  return "taken by hand";
}

export function CheckpointsEditor({
  project,
  onError,
}: {
  project: ProjectDto;
  onError: (e: string | null) => void;
}) {
  const [list, setList] = useState<CheckpointsDto | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const load = useCallback(
    () => api.listCheckpoints(project.id).then(setList, (e) => onError(errorMessage(e))),
    [project.id, onError],
  );
  useEffect(() => {
    void load();
  }, [load]);
  if (list === null) return null;
  const act = async (f: () => Promise<string>) => {
    try {
      setDone(await f());
      onError(null);
    } catch (e) {
      setDone(null);
      onError(errorMessage(e));
    }
    await load();
  };
  const take = () =>
    act(async () => {
      const c = await api.createCheckpoint(project.id, null);
      return `Took a checkpoint of ${c.files} files.`;
    });
  const restore = (c: CheckpointDto) =>
    act(async () => {
      const r = await api.restoreCheckpoint(project.id, c.id);
      return `Restored: ${r.files} ${r.files === 1 ? "file" : "files"} put back (${label(c)}).`;
    });
  const writable = project.access === "read-write";
  return (
    <fieldset className="checkpoints" aria-label="Checkpoints">
      <legend>Checkpoints</legend>
      <p className="muted">
        Sluice keeps the project&apos;s files as they were before each command it runs (not .git,
        ignored or protected files). Restoring one puts them back; it asks you first and can be
        undone. {list.checkpoints.length} kept, {humanBytes(list.storedBytes)} stored (at most{" "}
        {list.maxCheckpoints} and {humanBytes(list.maxBytes)}; the oldest go first).
      </p>
      {list.checkpoints.length > 0 && (
        <ul>
          {list.checkpoints.map((c) => (
            <li key={c.id} data-testid="checkpoint">
              <Time ms={Date.parse(c.created)} /> · <Text>{label(c)}</Text>{" "}
              <span className="muted">
                · {c.files} files, {humanBytes(c.bytes)}
              </span>{" "}
              {writable && (
                <button
                  type="button"
                  className="small"
                  aria-label={`Restore ${visible(label(c))}`}
                  onClick={() => void restore(c)}
                >
                  Restore
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {done && (
        <p className="status-available" role="status">
          {done}
        </p>
      )}
      {writable && (
        <div className="row">
          <button type="button" onClick={() => void take()}>
            Take a checkpoint now
          </button>
        </div>
      )}
    </fieldset>
  );
}

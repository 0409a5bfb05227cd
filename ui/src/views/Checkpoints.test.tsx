// A project's checkpoints in the Projects view, with IPC mocked at the api.ts boundary.
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { CheckpointDto } from "../bindings/ipc";
import { project, token } from "../test/fixtures";

vi.mock("../api", () => import("../test/api"));

import { App } from "../App";
import { ApiError, m, resetApi } from "../test/api";

const checkpoint = (over: Partial<CheckpointDto> = {}): CheckpointDto => ({
  id: "ckpt_aaaaaaaaaaaaaaaaaa",
  name: null,
  created: "2026-12-04T01:00:00Z",
  files: 120,
  bytes: 48_000,
  addedBytes: 2_000,
  beforeCommand: "npm install",
  jobId: "job_1",
  ...over,
});

const listed = (checkpoints: CheckpointDto[]) => ({
  checkpoints,
  storedBytes: 3 * 1024 * 1024,
  maxCheckpoints: 50,
  maxBytes: 2 * 1024 ** 3,
});

beforeEach(() => {
  resetApi();
  m.listTokens.mockResolvedValue([token()]);
});

async function openCheckpoints(p = project({ access: "read-write" })) {
  const user = userEvent.setup();
  m.listProjects.mockResolvedValue([p]);
  render(<App />);
  await user.click(await screen.findByRole("button", { name: p.name }));
  const detail = screen.getByRole("region", { name: `Project ${p.name}` });
  const box = await within(detail).findByRole("group", { name: "Checkpoints" });
  return { user, detail, box };
}

describe("a project's checkpoints", () => {
  it("are listed with the command each was taken before and the space they take", async () => {
    m.listCheckpoints.mockResolvedValue(
      listed([checkpoint(), checkpoint({ id: "ckpt_b", name: "before \u202erefactor", beforeCommand: null })]),
    );
    const { box } = await openCheckpoints();
    const rows = within(box).getAllByTestId("checkpoint");
    expect(rows).toHaveLength(2);
    expect(rows[0]).toHaveTextContent("before npm install");
    expect(rows[0]).toHaveTextContent("120 files");
    expect(rows[1]).toHaveTextContent("before ⟨U+202E⟩refactor");
    expect(box).toHaveTextContent("2 kept, 3.0 MB stored");
  });

  it("restore one through the shell's confirmation and say what came back", async () => {
    m.listCheckpoints.mockResolvedValue(listed([checkpoint()]));
    m.restoreCheckpoint.mockResolvedValue({ operationId: "op_x", files: 3 });
    const { user, box } = await openCheckpoints();
    await user.click(within(box).getByRole("button", { name: "Restore before npm install" }));
    expect(m.restoreCheckpoint).toHaveBeenLastCalledWith(project().id, "ckpt_aaaaaaaaaaaaaaaaaa");
    expect(await within(box).findByRole("status")).toHaveTextContent("3 files put back");
  });

  it("show why nothing changed when the system dialog says no", async () => {
    m.listCheckpoints.mockResolvedValue(listed([checkpoint()]));
    m.restoreCheckpoint.mockRejectedValue(
      new ApiError({ code: "denied", message: 'nothing changed: you chose "Keep the files"' }),
    );
    const { user, box, detail } = await openCheckpoints();
    await user.click(within(box).getByRole("button", { name: /Restore/ }));
    expect(await within(detail).findByText(/you chose "Keep the files"/)).toBeInTheDocument();
    expect(within(box).queryByRole("status")).toBeNull();
  });

  it("can be taken by hand", async () => {
    m.createCheckpoint.mockResolvedValue(checkpoint({ beforeCommand: null, files: 7 }));
    const { user, box } = await openCheckpoints();
    await user.click(within(box).getByRole("button", { name: "Take a checkpoint now" }));
    expect(m.createCheckpoint).toHaveBeenLastCalledWith(project().id, null);
    expect(await within(box).findByRole("status")).toHaveTextContent("7 files");
    expect(m.listCheckpoints).toHaveBeenCalledTimes(2);
  });

  it("offer no restore in a read-only project", async () => {
    m.listCheckpoints.mockResolvedValue(listed([checkpoint()]));
    const { box } = await openCheckpoints(project({ access: "read-only" }));
    expect(within(box).getAllByTestId("checkpoint")).toHaveLength(1);
    expect(within(box).queryByRole("button")).toBeNull();
  });
});

// A project's git e-mail setting in the Projects view, with IPC mocked at the api.ts boundary.
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { project, token } from "../test/fixtures";

vi.mock("../api", () => import("../test/api"));

import { App } from "../App";
import { ApiError, m, resetApi } from "../test/api";

beforeEach(() => {
  resetApi();
  m.listTokens.mockResolvedValue([token()]);
});

async function openGitHistory(p = project()) {
  const user = userEvent.setup();
  m.listProjects.mockResolvedValue([p]);
  render(<App />);
  await user.click(await screen.findByRole("button", { name: p.name }));
  const detail = screen.getByRole("region", { name: `Project ${p.name}` });
  const box = within(detail).getByRole("group", { name: "Git history" });
  return { user, detail, box, toggle: within(box).getByRole("checkbox", { name: /e-mail addresses/ }) };
}

describe("a project's git e-mail addresses", () => {
  it("are hidden by default and shown with the toggle", async () => {
    const { user, toggle } = await openGitHistory();
    expect(toggle).not.toBeChecked();
    m.setProjectGitEmails.mockResolvedValue(project({ showGitEmails: true }));
    await user.click(toggle);
    expect(m.setProjectGitEmails).toHaveBeenLastCalledWith(project().id, true);
  });

  it("are hidden again with the toggle", async () => {
    const { user, toggle } = await openGitHistory(project({ showGitEmails: true }));
    expect(toggle).toBeChecked();
    m.setProjectGitEmails.mockResolvedValue(project());
    await user.click(toggle);
    expect(m.setProjectGitEmails).toHaveBeenLastCalledWith(project().id, false);
  });

  it("stay hidden, with the reason shown, when the system dialog says no", async () => {
    const { user, detail, toggle } = await openGitHistory();
    m.setProjectGitEmails.mockRejectedValue(
      new ApiError({ code: "denied", message: 'nothing changed: you chose "Keep hidden"' }),
    );
    await user.click(toggle);
    expect(await within(detail).findByText(/you chose "Keep hidden"/)).toBeInTheDocument();
    expect(toggle).not.toBeChecked();
  });
});

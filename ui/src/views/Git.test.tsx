// A project's git settings (e-mail addresses, hooks) in the Projects view, with IPC mocked at the api.ts boundary.
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

async function openGitHooks(p = project({ access: "read-write", exec: "project" })) {
  const user = userEvent.setup();
  m.listProjects.mockResolvedValue([p]);
  render(<App />);
  await user.click(await screen.findByRole("button", { name: p.name }));
  const detail = screen.getByRole("region", { name: `Project ${p.name}` });
  const box = within(detail).getByRole("group", { name: "Git hooks" });
  return { user, detail, box, toggle: within(box).getByRole("checkbox", { name: /hooks/ }) };
}

describe("a project's git hooks", () => {
  it("are off by default and turned on with the toggle", async () => {
    const { user, toggle } = await openGitHooks();
    expect(toggle).not.toBeChecked();
    m.setProjectGitHooks.mockResolvedValue(project({ runGitHooks: true }));
    await user.click(toggle);
    expect(m.setProjectGitHooks).toHaveBeenLastCalledWith(project().id, true);
  });

  it("say commits are refused when the execution mode runs nothing", async () => {
    const { box } = await openGitHooks(
      project({ access: "read-write", exec: "safe", runGitHooks: true }),
    );
    expect(within(box).getByText(/Commits are refused/)).toBeInTheDocument();
  });

  it("stay off, with the reason shown, when the system dialog says no", async () => {
    const { user, detail, toggle } = await openGitHooks();
    m.setProjectGitHooks.mockRejectedValue(
      new ApiError({ code: "denied", message: 'nothing changed: you chose "Keep off"' }),
    );
    await user.click(toggle);
    expect(await within(detail).findByText(/you chose "Keep off"/)).toBeInTheDocument();
    expect(toggle).not.toBeChecked();
  });

  it("are not offered in a read-only project", async () => {
    const p = project({ access: "read-only" });
    m.listProjects.mockResolvedValue([p]);
    render(<App />);
    await userEvent.setup().click(await screen.findByRole("button", { name: p.name }));
    const detail = screen.getByRole("region", { name: `Project ${p.name}` });
    expect(within(detail).queryByRole("group", { name: "Git hooks" })).toBeNull();
  });
});

// Worktree projects in the Projects view: each under the project it was made from, saying so,
// and removed with a question that says what happens to its folder and its branch.
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { project, token } from "../test/fixtures";

vi.mock("../api", () => import("../test/api"));

import { App } from "../App";
import { m, resetApi } from "../test/api";

const parent = project({ id: "proj_parent", name: "app", access: "read-write" });
const other = project({ id: "proj_other", name: "docs" });
const tree = project({ id: "proj_tree", name: "app@fix", access: "read-write", worktreeOf: "proj_parent" });

beforeEach(() => {
  resetApi();
  m.listTokens.mockResolvedValue([token()]);
  // The engine lists by name: the worktree comes after an unrelated project.
  m.listProjects.mockResolvedValue([parent, other, tree]);
});

describe("worktree projects", () => {
  it("are listed right under the project they were made from", async () => {
    render(<App />);
    await screen.findByRole("button", { name: "app@fix" });
    const rows = screen.getAllByTestId("project-row").map((r) => r.textContent ?? "");
    expect(rows[0]).toContain("app");
    expect(rows[1]).toContain("app@fix");
    expect(rows[1]).toContain("worktree");
    expect(rows[2]).toContain("docs");
    expect(rows[2]).not.toContain("worktree");
  });

  it("name their parent and say that removing keeps the branch", async () => {
    const user = userEvent.setup();
    render(<App />);
    await user.click(await screen.findByRole("button", { name: "app@fix" }));
    const detail = screen.getByRole("region", { name: "Project app@fix" });
    expect(within(detail).getByTestId("worktree-of")).toHaveTextContent("A git worktree of app");
    await user.click(within(detail).getByRole("button", { name: "Remove…" }));
    expect(detail).toHaveTextContent("its branch stays in the repository");
    m.removeProject.mockResolvedValue(tree);
    await user.click(within(detail).getByRole("button", { name: "Remove" }));
    expect(m.removeProject).toHaveBeenLastCalledWith("proj_tree");
  });

  it("are not marked on an ordinary project", async () => {
    const user = userEvent.setup();
    render(<App />);
    await user.click(await screen.findByRole("button", { name: "docs" }));
    const detail = screen.getByRole("region", { name: "Project docs" });
    expect(within(detail).queryByTestId("worktree-of")).toBeNull();
  });
});

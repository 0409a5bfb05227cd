// The Approvals view and its place in the window, with IPC mocked at the api.ts boundary only.
import { act, fireEvent, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { approval, project, token } from "../test/fixtures";

vi.mock("../api", () => import("../test/api"));

import { App } from "../App";
import { emit, m, resetApi } from "../test/api";
import { ARGS_SHOWN, ApprovalsView, INERT_MS, countdown } from "./Approvals";

const reload = vi.fn(async () => {});

beforeEach(() => {
  vi.useFakeTimers({ shouldAdvanceTime: true });
  resetApi();
  m.decideApproval.mockImplementation(async (id, verdict, reason) =>
    approval({ id, status: verdict === "approve" ? "approved" : "denied", reason }),
  );
});

afterEach(() => {
  vi.useRealTimers();
});

const setup = () => userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
const arm = () => act(() => vi.advanceTimersByTime(INERT_MS + 10));
const card = () => screen.getByTestId("approval-card");
const denyButton = () => within(card()).getByRole("button", { name: "Deny" });
const approveButton = () => within(card()).getByRole("button", { name: "Approve once" });

function show(approvals = [approval()], paused = false) {
  return render(<ApprovalsView approvals={approvals} paused={paused} reload={reload} />);
}

describe("an approval card", () => {
  it("shows who, what exactly, where and when", () => {
    show();
    const c = card();
    expect(c).toHaveTextContent("Cursor wants to delete_path in my-app");
    expect(within(c).getByTestId("approval-summary")).toHaveTextContent(
      "delete src/old.rs (2.1 KB, restorable)",
    );
    expect(c).toHaveTextContent("Asked just now");
  });

  it("says which file of the change another program runs on its own, and what it does", () => {
    show([
      approval({
        tool: "write_file",
        summary: "create .vscode/tasks.json (120 B)",
        autorun: [
          {
            path: ".vscode/tasks\u202E.json",
            program: "VS Code",
            consequence: "VS Code runs tasks marked runOn folderOpen when you open the folder",
          },
        ],
      }),
    ]);
    const note = within(card()).getByTestId("approval-autorun");
    expect(note).toHaveTextContent(
      "Runs on its own. Another program runs this file without asking you: .vscode/tasks⟨U+202E⟩.json: VS Code runs tasks marked runOn folderOpen when you open the folder",
    );
    expect(note.textContent).not.toMatch(/\u202E/);
  });

  it("shows no such note for an ordinary change", () => {
    show();
    expect(within(card()).queryByTestId("approval-autorun")).toBeNull();
  });

  it("AP-06: focuses Deny and keeps both buttons inert for about half a second", async () => {
    const user = setup();
    show();
    expect(denyButton()).toHaveFocus();
    expect(approveButton()).toBeDisabled();
    expect(denyButton()).toHaveAttribute("aria-disabled", "true");
    expect(card()).toHaveAttribute("data-armed", "false");
    // A click that lands right after the card appears does nothing.
    fireEvent.click(denyButton());
    fireEvent.click(approveButton());
    expect(m.decideApproval).not.toHaveBeenCalled();
    act(() => vi.advanceTimersByTime(INERT_MS - 100));
    expect(approveButton()).toBeDisabled();
    arm();
    expect(approveButton()).toBeEnabled();
    expect(card()).toHaveAttribute("data-armed", "true");
    await user.click(approveButton());
    expect(m.decideApproval).toHaveBeenCalledWith("apr_aaaaaaaaaaaaaaaa", "approve", null);
    expect(reload).toHaveBeenCalled();
  });

  it("AP-06: never approves on Enter", async () => {
    const user = setup();
    show();
    arm();
    approveButton().focus();
    await user.keyboard("{Enter}");
    expect(m.decideApproval).not.toHaveBeenCalled();
    // Enter in the reason field denies with that reason.
    await user.type(within(card()).getByRole("textbox", { name: /Reason/ }), "not now{Enter}");
    expect(m.decideApproval).toHaveBeenCalledTimes(1);
    expect(m.decideApproval).toHaveBeenCalledWith("apr_aaaaaaaaaaaaaaaa", "deny", "not now");
  });

  it("offers Always allow for a command only, with the same guards as Approve once", async () => {
    const user = setup();
    const always = () => within(card()).queryByRole("button", { name: "Always allow this command" });
    const { unmount } = show();
    expect(always()).toBeNull();
    unmount();
    show([approval({ tool: "run_command", summary: "run cargo test", alwaysAllowable: true })]);
    expect(always()).toBeDisabled();
    arm();
    always()!.focus();
    await user.keyboard("{Enter}");
    expect(m.decideApproval).not.toHaveBeenCalled();
    await user.click(always()!);
    expect(m.decideApproval).toHaveBeenCalledWith("apr_aaaaaaaaaaaaaaaa", "approve-always", null);
  });

  it("shows a command token by token, folding a long argument list", async () => {
    const user = setup();
    const args = Array.from({ length: ARGS_SHOWN + 3 }, (_, i) => `arg${i}`);
    const argv = ["/usr/bin/sh", "-c", "echo a; rm -rf b", "", ...args];
    show([
      approval({
        tool: "run_command",
        alwaysAllowable: true,
        command: {
          argv,
          cwd: "scripts",
          env: ["CI=1"],
          network: "off",
          confinement: "Landlock ABI 7: jobs write only inside the project and their private folders.",
          sandbox: null,
        },
      }),
    ]);
    const cmd = within(card()).getByTestId("approval-command");
    const tokens = () => within(cmd).getAllByRole("listitem").map((li) => li.textContent);
    expect(tokens().slice(0, 4)).toEqual(["/usr/bin/sh", "-c", "echo a; rm -rf b", "(empty argument)"]);
    expect(tokens()).toHaveLength(1 + ARGS_SHOWN);
    expect(cmd).toHaveTextContent("In scripts with CI=1");
    expect(within(cmd).getByTestId("approval-confinement")).toHaveTextContent(
      "Network: off. Landlock ABI 7: jobs write only inside the project and their private folders.",
    );
    await user.click(within(cmd).getByRole("button", { name: `Show all ${argv.length - 1} arguments` }));
    expect(tokens()).toHaveLength(argv.length);
    expect(tokens().at(-1)).toBe(`arg${ARGS_SHOWN + 2}`);
  });

  it("says the risk class and why, as Sluice worked them out", () => {
    show([
      approval({
        id: "apr_cmd",
        tool: "run_command",
        risk: { level: "dangerous", class: "arbitrary program", why: "inline code evaluation (`sh -c`)" },
      }),
      approval({
        id: "apr_del",
        risk: {
          level: null,
          class: "deletes 1 file (restorable)",
          why: "files leave their place in the project; Sluice backs them up first, so this can be restored",
        },
      }),
      approval({ id: "apr_none", summary: "something Sluice cannot class" }),
    ]);
    const [cmd, del, none] = screen.getAllByTestId("approval-card");
    expect(within(cmd).getByTestId("approval-risk")).toHaveTextContent(
      "Risk: arbitrary program (dangerous). Why: inline code evaluation (`sh -c`)",
    );
    expect(within(del).getByTestId("approval-risk")).toHaveTextContent(
      "Risk: deletes 1 file (restorable). Why: files leave their place in the project; Sluice backs them up first, so this can be restored",
    );
    expect(within(none).queryByTestId("approval-risk")).toBeNull();
  });

  it("UI-03: shows the risk's text as text, hidden characters visible", () => {
    const { container } = show([
      approval({
        risk: { level: "caution", class: "<b>arbitrary</b> program", why: "runs `ech\u202Eo`" },
      }),
    ]);
    const line = within(card()).getByTestId("approval-risk");
    expect(line).toHaveTextContent("Risk: <b>arbitrary</b> program (caution). Why: runs `ech⟨U+202E⟩o`");
    expect(line.querySelector("b")).toBeNull();
    expect(container.textContent).not.toMatch(/\u202E/);
  });

  it("UI-03: shows hidden characters inside command tokens visibly", () => {
    const { container } = show([
      approval({
        tool: "run_command",
        tokenLabel: "Cur\u202Esor",
        command: {
          argv: ["/usr/bin/rm\u200B", "-rf", "invoice\u202Etxt.exe", "a\u0007b"],
          cwd: "sub\u2066dir",
          env: ["X=\u200Fy"],
          network: "on",
          confinement: "not confined\u202E",
          sandbox: null,
        },
      }),
    ]);
    const cmd = within(card()).getByTestId("approval-command");
    const tokens = within(cmd).getAllByRole("listitem").map((li) => li.textContent);
    expect(tokens).toEqual(["/usr/bin/rm⟨U+200B⟩", "-rf", "invoice⟨U+202E⟩txt.exe", "a⟨U+0007⟩b"]);
    expect(cmd).toHaveTextContent("In sub⟨U+2066⟩dir with X=⟨U+200F⟩y");
    expect(cmd).toHaveTextContent("Network: allowed. not confined⟨U+202E⟩");
    expect(card()).toHaveAccessibleName("Approval: Cur⟨U+202E⟩sor · run_command · my-app");
    expect(container.textContent).not.toMatch(/[\u202E\u200B\u200F\u2066\u0007]/);
  });

  it("keeps Always allow disabled while AI access is paused", () => {
    show([approval({ alwaysAllowable: true })], true);
    arm();
    expect(
      within(card()).getByRole("button", { name: "Always allow this command" }),
    ).toBeDisabled();
  });

  it("denies on Esc", async () => {
    const user = setup();
    show();
    expect(denyButton()).toHaveFocus();
    await user.keyboard("{Escape}");
    expect(m.decideApproval).toHaveBeenCalledWith("apr_aaaaaaaaaaaaaaaa", "deny", null);
  });

  it("denies with the reason typed", async () => {
    const user = setup();
    show();
    arm();
    await user.type(within(card()).getByRole("textbox", { name: /Reason/ }), "  keep that file ");
    await user.click(denyButton());
    expect(m.decideApproval).toHaveBeenCalledWith("apr_aaaaaaaaaaaaaaaa", "deny", "keep that file");
  });

  it("UI-03: shows deceptive characters visibly and markup as text", () => {
    const { container } = show([
      approval({
        summary: "delete invoice\u202Etxt.exe (1 B, restorable)\ndelete <img src=x onerror=alert(1)>.txt (1 B, restorable)",
        tokenLabel: "Cur\u200Bsor",
      }),
    ]);
    const summary = screen.getByTestId("approval-summary");
    expect(summary).toHaveTextContent("delete invoice⟨U+202E⟩txt.exe (1 B, restorable)");
    expect(summary).toHaveTextContent("delete <img src=x onerror=alert(1)>.txt");
    expect(card()).toHaveTextContent("Cur⟨U+200B⟩sor wants to");
    expect(container.querySelector("img")).toBeNull();
    expect(container.textContent).not.toMatch(/[\u202E\u200B]/);
  });

  it("counts down to expiry, then cannot be approved", () => {
    show([approval({ expiresMs: Date.now() + 65_000 })]);
    arm();
    const timer = screen.getByTestId("approval-countdown");
    expect(timer).toHaveTextContent("Expires in 1:05");
    // The clock ticks each second (the first 510 ms went to the inert period).
    act(() => vi.advanceTimersByTime(1_490));
    expect(timer).toHaveTextContent("Expires in 1:03");
    act(() => vi.advanceTimersByTime(60_000));
    expect(timer).toHaveTextContent("Expires in 0:03");
    expect(timer).toHaveClass("urgent");
    act(() => vi.advanceTimersByTime(3_000));
    expect(timer).toHaveTextContent("Expired — nothing will be done");
    expect(approveButton()).toBeDisabled();
    expect(countdown(4 * 60_000 + 5_000)).toBe("4:05");
  });

  it("shows the engine's refusal, e.g. approving while paused elsewhere", async () => {
    const user = setup();
    m.decideApproval.mockRejectedValue({ code: "paused", message: "AI access is paused; resume it before approving (or deny the request)" });
    show();
    arm();
    await user.click(approveButton());
    expect(await within(card()).findByRole("alert")).toHaveTextContent("AI access is paused");
  });

  it("PE-01: cannot be approved while AI access is paused", () => {
    show([approval()], true);
    arm();
    expect(approveButton()).toBeDisabled();
    expect(card()).toHaveTextContent("Resume AI access to approve.");
  });
});

describe("the Approvals view", () => {
  it("offers Deny all when several wait, and lists recent decisions", async () => {
    const user = setup();
    show([
      approval({ id: "apr_1", summary: "delete a.txt (1 B, restorable)" }),
      approval({ id: "apr_2", summary: "delete b.txt (1 B, restorable)" }),
      approval({
        id: "apr_0",
        status: "denied",
        reason: "not that one",
        decidedMs: Date.now() - 60_000,
        decidedBy: "local user (tray)",
      }),
      approval({ id: "apr_9", status: "expired", decidedBy: "expiry", decidedMs: Date.now() }),
    ]);
    expect(screen.getAllByTestId("approval-card")).toHaveLength(2);
    // Only the first card takes the focus.
    expect(within(screen.getAllByTestId("approval-card")[0]).getByRole("button", { name: "Deny" })).toHaveFocus();
    const rows = screen.getAllByTestId("decision-row");
    expect(rows[0]).toHaveTextContent("Denied: not that one");
    expect(rows[0]).toHaveTextContent("local user (tray)");
    expect(rows[1]).toHaveTextContent("Expired — nothing was done");
    await user.click(screen.getByRole("button", { name: "Deny all (2)" }));
    expect(m.decideApproval).toHaveBeenCalledWith("apr_1", "deny", null);
    expect(m.decideApproval).toHaveBeenCalledWith("apr_2", "deny", null);
    expect(m.decideApproval).toHaveBeenCalledTimes(2);
  });

  it("has no Deny all for a single approval, and an empty state for none", () => {
    const { rerender } = show();
    expect(screen.queryByRole("button", { name: /Deny all/ })).toBeNull();
    rerender(<ApprovalsView approvals={[]} paused={false} reload={reload} />);
    expect(screen.getByText("No approvals waiting")).toBeInTheDocument();
  });
});

describe("approvals in the window", () => {
  beforeEach(() => {
    m.listProjects.mockResolvedValue([project({ access: "read-write" })]);
    m.listTokens.mockResolvedValue([token()]);
    m.defaultShield.mockResolvedValue([".env"]);
  });

  it("badges the sidebar with the pending count and opens the view when asked", async () => {
    render(<App />);
    await screen.findByTestId("state-pill");
    expect(screen.queryByTestId("approvals-badge")).toBeNull();
    m.listApprovals.mockResolvedValue([approval({ id: "apr_1" }), approval({ id: "apr_2" })]);
    await act(async () => emit({ kind: "approvalRequested", id: "apr_2" }));
    expect(await screen.findByTestId("approvals-badge")).toHaveTextContent("2");
    // A click on the notification (or the tray's "Details") opens the Approvals view.
    await act(async () => emit({ kind: "openView", view: "approvals" }));
    expect(screen.getAllByTestId("approval-card")).toHaveLength(2);
    m.listApprovals.mockResolvedValue([approval({ id: "apr_2" })]);
    await act(async () => emit({ kind: "approvalDecided", id: "apr_1", state: "approved" }));
    expect(screen.getByTestId("approvals-badge")).toHaveTextContent("1");
    expect(screen.getAllByTestId("approval-card")).toHaveLength(1);
  });

  it("sets a project's approval policy with segmented controls", async () => {
    const user = setup();
    m.setProjectPolicy.mockResolvedValue(project({ access: "read-write" }));
    render(<App />);
    await user.click(await screen.findByRole("button", { name: "my-app" }));
    const deletes = screen.getByRole("group", { name: "Deleting or moving files" });
    expect(within(deletes).getByRole("button", { name: "Ask" })).toHaveAttribute("aria-pressed", "true");
    const writes = screen.getByRole("group", { name: "Creating or changing files" });
    expect(within(writes).getByRole("button", { name: "Allow" })).toHaveAttribute("aria-pressed", "true");
    await user.click(within(writes).getByRole("button", { name: "Ask" }));
    expect(m.setProjectPolicy).toHaveBeenCalledWith({ id: "proj_aaaaaaaaaaaaaaaa", askDeletes: null, askWrites: true });
    await user.click(within(deletes).getByRole("button", { name: "Allow" }));
    expect(m.setProjectPolicy).toHaveBeenCalledWith({ id: "proj_aaaaaaaaaaaaaaaa", askDeletes: false, askWrites: null });
  });
});

// The window with IPC mocked at the api.ts boundary only.
import { act, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { beforeEach, describe, expect, it, vi } from "vitest";
import {
  allowRule,
  approval,
  autorunDefaults,
  created,
  project,
  state,
  token,
} from "./test/fixtures";

vi.mock("./api", () => import("./test/api"));

import { App, initialView } from "./App";
import { PAGE } from "./views/Activity";
import { diagnostics } from "./views/Settings";
import { exactTime } from "./format";
import { emit, m, resetApi } from "./test/api";

beforeEach(() => resetApi());

describe("top bar", () => {
  it("shows the state and pauses and resumes", async () => {
    const user = userEvent.setup();
    render(<App />);
    expect(await screen.findByTestId("state-pill")).toHaveTextContent("AI access on");
    m.setPaused.mockResolvedValue(state({ paused: true }));
    await user.click(screen.getByRole("button", { name: "Pause AI access" }));
    expect(m.setPaused).toHaveBeenCalledWith(true);
    expect(screen.getByTestId("state-pill")).toHaveTextContent("Paused");
    // A pause from the tray or the CLI arrives as an event.
    act(() => emit({ kind: "accessChanged", paused: false }));
    expect(screen.getByTestId("state-pill")).toHaveTextContent("AI access on");
  });

  it("names what was changed in the database outside Sluice, and only then", async () => {
    const message =
      'project "site" (proj_x) was changed outside Sluice (its seal does not match): it is unavailable.';
    m.appState.mockResolvedValue(
      state({ integrity: [{ code: "project-seal", subject: "proj_x", message }] }),
    );
    const { unmount } = render(<App />);
    const banner = await screen.findByTestId("integrity-banner");
    expect(banner).toHaveTextContent(message);
    expect(banner).toHaveTextContent("sluice doctor --reseal");
    unmount();
    m.appState.mockResolvedValue(state());
    render(<App />);
    await screen.findByTestId("state-pill");
    expect(screen.queryByTestId("integrity-banner")).toBeNull();
  });

  it("opens on the view the URL's fragment names, else on Projects", async () => {
    expect(initialView("#approvals")).toBe("approvals");
    expect(initialView("#jobs")).toBe("jobs");
    expect(initialView("")).toBe("projects");
    expect(initialView("#nonsense")).toBe("projects");
    expect(initialView("#constructor")).toBe("projects");
    window.location.hash = "#approvals";
    try {
      render(<App />);
      expect(await screen.findByText("No approvals waiting")).toBeInTheDocument();
    } finally {
      window.location.hash = "";
    }
  });

  it("marks the drawn view only once the state has loaded, and tells the tray", async () => {
    let answer: (s: ReturnType<typeof state>) => void = () => {};
    m.appState.mockReturnValue(new Promise((r) => (answer = r)));
    const user = userEvent.setup();
    render(<App />);
    const main = screen.getByRole("main");
    expect(main).not.toHaveAttribute("data-view");
    expect(m.windowShown).not.toHaveBeenCalled();
    await act(async () => answer(state()));
    expect(main).toHaveAttribute("data-view", "projects");
    expect(m.windowShown).toHaveBeenLastCalledWith("projects");
    await user.keyboard("{Control>}4{/Control}");
    expect(screen.getByRole("main")).toHaveAttribute("data-view", "jobs");
    expect(m.windowShown).toHaveBeenLastCalledWith("jobs");
  });

  it("switches views with Ctrl+1…7", async () => {
    const user = userEvent.setup();
    render(<App />);
    await screen.findByTestId("state-pill");
    await user.keyboard("{Control>}2{/Control}");
    expect(screen.getByRole("heading", { name: "Tokens" })).toBeInTheDocument();
    await user.keyboard("{Control>}3{/Control}");
    expect(screen.getByText("No approvals waiting")).toBeInTheDocument();
    await user.keyboard("{Control>}4{/Control}");
    expect(screen.getByText("No jobs")).toBeInTheDocument();
    await user.keyboard("{Control>}6{/Control}");
    expect(screen.getByRole("heading", { name: "Settings" })).toBeInTheDocument();
    await user.keyboard("{Control>}7{/Control}");
    expect(screen.getByRole("heading", { name: "Clients" })).toBeInTheDocument();
  });
});

describe("first run", () => {
  it("offers the three steps and ticks what is done", async () => {
    m.listProjects.mockResolvedValue([project()]);
    render(<App />);
    const steps = await screen.findByRole("region", { name: "Getting started" });
    expect(await within(steps).findByText("(done)")).toBeInTheDocument();
    expect(within(steps).getByRole("button", { name: "New token" })).toBeInTheDocument();
    expect(within(steps).queryByRole("button", { name: "Authorize project…" })).toBeNull();
  });

  it("stays until an assistant has used a live token", async () => {
    m.listProjects.mockResolvedValue([project()]);
    m.listTokens.mockResolvedValue([token(), token({ id: "tok_b", revokedMs: 1, lastUsedMs: 1 })]);
    const { unmount } = render(<App />);
    const steps = await screen.findByRole("region", { name: "Getting started" });
    expect(within(steps).getByRole("button", { name: "Connect a client…" })).toBeInTheDocument();
    unmount();
    m.listTokens.mockResolvedValue([token({ lastUsedMs: Date.now() })]);
    render(<App />);
    await screen.findByRole("button", { name: "my-app" });
    expect(screen.queryByRole("region", { name: "Getting started" })).toBeNull();
  });
});

describe("projects", () => {
  it("authorizes a typed path with safe defaults", async () => {
    const user = userEvent.setup();
    m.addProject.mockResolvedValue(project());
    render(<App />);
    await user.click((await screen.findAllByRole("button", { name: "Authorize project…" }))[0]);
    const form = screen.getByRole("form", { name: "Authorize a folder" });
    await user.type(within(form).getByRole("textbox", { name: /Folder/ }), "/home/me/code/my-app");
    expect(within(form).getByRole("radio", { name: /Read-only/ })).toBeChecked();
    expect(within(form).getByRole("radio", { name: /^Off/ })).toBeChecked();
    // Execution that changes files needs read-write first.
    expect(within(form).getByRole("radio", { name: /^Any/ })).toBeDisabled();
    await user.click(within(form).getByRole("button", { name: "Authorize" }));
    expect(m.addProject).toHaveBeenCalledWith({
      path: "/home/me/code/my-app",
      name: null,
      access: "read-only",
      exec: "off",
    });
  });

  it("fills the path from the native picker", async () => {
    const user = userEvent.setup();
    m.pickFolder.mockResolvedValue("/home/me/picked");
    render(<App />);
    await user.click((await screen.findAllByRole("button", { name: "Authorize project…" }))[0]);
    await user.click(screen.getByRole("button", { name: "Choose…" }));
    expect(screen.getByRole("textbox", { name: /Folder/ })).toHaveValue("/home/me/picked");
  });

  it("shows the engine's refusal as its message", async () => {
    const user = userEvent.setup();
    m.addProject.mockRejectedValue({ code: "forbidden", message: "Sluice will not authorize your home folder" });
    render(<App />);
    await user.click((await screen.findAllByRole("button", { name: "Authorize project…" }))[0]);
    await user.type(screen.getByRole("textbox", { name: /Folder/ }), "/home/me");
    await user.click(screen.getByRole("button", { name: "Authorize" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("will not authorize your home folder");
  });

  it("UI-03: renders names as text and makes hidden characters visible", async () => {
    m.listProjects.mockResolvedValue([
      project({ name: '<img src=x onerror="alert(1)">', root: "/tmp/evil\u202Etxt.exe" }),
    ]);
    const { container } = render(<App />);
    expect(await screen.findByText('<img src=x onerror="alert(1)">')).toBeInTheDocument();
    expect(container.querySelector("img")).toBeNull();
    expect(screen.getByText("/tmp/evil⟨U+202E⟩txt.exe")).toBeInTheDocument();
  });

  it("shows each project's waiting approvals and opens them", async () => {
    const user = userEvent.setup();
    m.listProjects.mockResolvedValue([project(), project({ id: "proj_b", name: "other", root: "/home/me/other" })]);
    m.listTokens.mockResolvedValue([token()]);
    m.listApprovals.mockResolvedValue([
      approval({ id: "apr_1" }),
      approval({ id: "apr_2" }),
      approval({ id: "apr_3", status: "denied", decidedMs: Date.now() }),
    ]);
    render(<App />);
    const [mine, other] = await screen.findAllByTestId("project-row");
    expect(within(other).getByTestId("project-waiting")).toHaveTextContent("—");
    await user.click(await within(mine).findByRole("button", { name: "2 waiting" }));
    expect(screen.getByRole("main", { name: "Approvals" })).toBeInTheDocument();
    expect(screen.getAllByTestId("approval-card")).toHaveLength(2);
  });

  it("UI-03: makes hidden characters visible in the confirmation questions too", async () => {
    const user = userEvent.setup();
    m.listProjects.mockResolvedValue([project({ name: "my\u202Eppa" })]);
    m.listTokens.mockResolvedValue([token()]);
    m.listAllowRules.mockResolvedValue([allowRule({ id: 1, command: "rm\u200B -rf x", askedBy: "Cur\u202Esor" })]);
    render(<App />);
    await user.click(await screen.findByRole("button", { name: "my⟨U+202E⟩ppa" }));
    const detail = screen.getByRole("region", { name: "Project my⟨U+202E⟩ppa" });
    expect(await within(detail).findByRole("button", { name: "Ask again before rm⟨U+200B⟩ -rf x" })).toBeInTheDocument();
    await user.click(within(detail).getByRole("button", { name: "Remove…" }));
    expect(within(detail).getByRole("group", { name: /^Remove my⟨U\+202E⟩ppa\?/ })).toHaveTextContent(
      "Remove my⟨U+202E⟩ppa? The folder stays",
    );
    expect(within(detail).getByTestId("allow-rule-origin")).toHaveTextContent("asked by Cur⟨U+202E⟩sor");
    expect(detail.textContent).not.toMatch(/[\u202E\u200B]/);
  });

  it("removes only after confirmation, and edits the shield", async () => {
    const user = userEvent.setup();
    m.listProjects.mockResolvedValue([project()]);
    m.listTokens.mockResolvedValue([token()]);
    m.removeProject.mockResolvedValue(project());
    m.setShield.mockResolvedValue(project());
    render(<App />);
    await user.click(await screen.findByRole("button", { name: "my-app" }));
    const detail = screen.getByRole("region", { name: "Project my-app" });
    expect(await within(detail).findByText(".env")).toBeInTheDocument();
    await user.type(within(detail).getByRole("textbox", { name: "New pattern" }), "secrets/**");
    await user.click(within(detail).getByRole("button", { name: "Add pattern" }));
    expect(m.setShield).toHaveBeenCalledWith(project().id, [".env", "*.pem", "secrets/**"]);
    await user.click(within(detail).getByRole("button", { name: "Remove…" }));
    expect(m.removeProject).not.toHaveBeenCalled();
    await user.click(within(detail).getByRole("button", { name: "Remove" }));
    expect(m.removeProject).toHaveBeenCalledWith(project().id);
  });
});

describe("files that run on their own", () => {
  it("shows the auto-run list and guards an entry less, more, or anew", async () => {
    const user = userEvent.setup();
    m.listProjects.mockResolvedValue([project({ access: "read-write" })]);
    m.listTokens.mockResolvedValue([token()]);
    m.setAutorun.mockResolvedValue(project());
    render(<App />);
    await user.click(await screen.findByRole("button", { name: "my-app" }));
    const list = within(screen.getByRole("region", { name: "Project my-app" })).getByTestId("autorun");
    expect(list).toHaveTextContent("(the defaults)");
    await user.click(within(list).getByText("3 entries, 1 refused"));
    const rows = within(list).getAllByTestId("autorun-rule");
    expect(rows[0]).toHaveTextContent(".claude/settings.json refused · Claude Code:");
    expect(rows[1]).toHaveTextContent(".vscode/tasks.json asks you · VS Code: VS Code runs tasks marked runOn folderOpen");
    const defaults = autorunDefaults();
    await user.click(within(list).getByRole("button", { name: "Ask instead of refusing changes to .claude/settings.json" }));
    expect(m.setAutorun).toHaveBeenLastCalledWith(project().id, [
      { ...defaults[0], action: "ask" },
      defaults[1],
      defaults[2],
    ]);
    await user.click(within(list).getByRole("button", { name: "Stop guarding .mcp.json" }));
    expect(m.setAutorun).toHaveBeenLastCalledWith(project().id, defaults.slice(0, 2));
    await user.click(within(list).getByRole("button", { name: "Refuse changes to .vscode/tasks.json" }));
    expect(m.setAutorun).toHaveBeenLastCalledWith(project().id, [
      defaults[0],
      { ...defaults[1], action: "refuse" },
      defaults[2],
    ]);
    expect(within(list).queryByRole("button", { name: "Restore defaults" })).toBeNull();
    await user.type(within(list).getByRole("textbox", { name: "New auto-run pattern" }), "deploy/**");
    await user.type(within(list).getByRole("textbox", { name: "Which program runs it" }), "the deploy bot");
    await user.selectOptions(within(list).getByRole("combobox", { name: "A change to it" }), "refuse");
    await user.click(within(list).getByRole("button", { name: "Add entry" }));
    expect(m.setAutorun).toHaveBeenLastCalledWith(project().id, [
      ...defaults,
      {
        pattern: "deploy/**",
        action: "refuse",
        program: "the deploy bot",
        consequence: "the deploy bot runs or reads this file on its own",
      },
    ]);
    expect(within(list).getByRole("textbox", { name: "New auto-run pattern" })).toHaveValue("");
  });

  it("restores the defaults of a project with its own list, and shows a refusal to guard less", async () => {
    const user = userEvent.setup();
    const own = [{ pattern: "deploy/**", action: "ask" as const, program: "bot", consequence: "bot runs it" }];
    m.listProjects.mockResolvedValue([project({ autorun: own })]);
    m.listTokens.mockResolvedValue([token()]);
    m.setAutorun.mockRejectedValueOnce({ code: "denied", message: 'nothing changed: you chose "Keep guarding"' });
    render(<App />);
    await user.click(await screen.findByRole("button", { name: "my-app" }));
    const detail = screen.getByRole("region", { name: "Project my-app" });
    const list = within(detail).getByTestId("autorun");
    expect(list).toHaveTextContent("(your own list)");
    await user.click(within(list).getByText("1 entry, 0 refused"));
    await user.click(within(list).getByRole("button", { name: "Stop guarding deploy/**" }));
    expect(await within(detail).findByText(/Keep guarding/)).toBeInTheDocument();
    m.setAutorun.mockResolvedValue(project());
    await user.click(within(list).getByRole("button", { name: "Restore defaults" }));
    expect(m.setAutorun).toHaveBeenLastCalledWith(project().id, null);
  });
});

describe("always allowed commands", () => {
  it("lists a project's allow rules and removes one", async () => {
    const user = userEvent.setup();
    const rule = allowRule({ id: 7, command: "cargo test  (in crates/core)" });
    m.listProjects.mockResolvedValue([project()]);
    m.listTokens.mockResolvedValue([token()]);
    m.listAllowRules.mockResolvedValue([rule]);
    m.removeAllowRule.mockResolvedValue([]);
    render(<App />);
    await user.click(await screen.findByRole("button", { name: "my-app" }));
    const rules = await screen.findByTestId("allow-rules");
    expect(m.listAllowRules).toHaveBeenCalledWith(project().id);
    expect(within(rules).getByTestId("allow-rule")).toHaveTextContent(
      "cargo test (in crates/core) · added just now",
    );
    expect(within(rules).queryByTestId("allow-rule-origin")).toBeNull();
    await user.click(
      within(rules).getByRole("button", { name: /^Ask again before cargo test \(in crates\/core\)$/ }),
    );
    expect(m.removeAllowRule).toHaveBeenCalledWith(project().id, 7);
    expect(await within(rules).findByText(/None\. Every command asks first/)).toBeInTheDocument();
  });

  it("says who added each rule and from where, when Sluice recorded it", async () => {
    const user = userEvent.setup();
    m.listProjects.mockResolvedValue([project()]);
    m.listTokens.mockResolvedValue([token()]);
    m.listAllowRules.mockResolvedValue([
      allowRule({ id: 1, command: "cargo test", addedFrom: "tray", askedBy: "Cursor" }),
      allowRule({ id: 2, command: "make build", addedFrom: "cli", askedBy: "Claude" }),
      allowRule({ id: 3, command: "npm test", addedFrom: "window", askedBy: null }),
      allowRule({ id: 4, command: "go vet ./...", createdMs: Date.now() - 2 * 86_400_000 }),
    ]);
    render(<App />);
    await user.click(await screen.findByRole("button", { name: "my-app" }));
    const rows = await screen.findAllByTestId("allow-rule");
    expect(rows.map((r) => r.textContent?.replace(/\s*Remove$/, ""))).toEqual([
      "cargo test · added just now from the tray, asked by Cursor",
      "make build · added just now from the command line, asked by Claude",
      "npm test · added just now from the window",
      "go vet ./... · added 2 days ago",
    ]);
    // The exact time is on hover, as everywhere.
    expect(within(rows[3]).getByText("2 days ago")).toHaveAttribute("title");
  });
});

describe("tokens", () => {
  it("creates a token and shows it once with client snippets", async () => {
    const user = userEvent.setup();
    m.createToken.mockResolvedValue(created());
    render(<App />);
    await user.keyboard("{Control>}2{/Control}");
    await user.click(screen.getAllByRole("button", { name: "New token" }).at(-1)!);
    const form = screen.getByRole("form", { name: "New token" });
    await user.type(within(form).getByRole("textbox", { name: /Label/ }), "Cursor on laptop");
    await user.selectOptions(within(form).getByRole("combobox", { name: /Expires/ }), "30 days");
    await user.click(within(form).getByRole("button", { name: "Create token" }));
    expect(m.createToken).toHaveBeenCalledWith({
      label: "Cursor on laptop",
      scope: null,
      expiresInDays: 30,
      profile: "review",
    });
    const panel = await screen.findByRole("region", { name: "New token created" });
    expect(within(panel).getByTestId("new-token")).toHaveValue(created().secret);
    expect(panel).toHaveTextContent("only time");
    await user.click(within(panel).getByRole("button", { name: "Copy" }));
    expect(m.copy).toHaveBeenCalledWith(created().secret, true);
    expect(panel).toHaveTextContent("cleared after 60 seconds");
    await user.click(within(panel).getByRole("tab", { name: "Cursor" }));
    expect(within(panel).getByRole("tabpanel")).toHaveTextContent("~/.cursor/mcp.json");
  });

  it("shows scope names and the revoke question with hidden characters visible", async () => {
    const user = userEvent.setup();
    m.listTokens.mockResolvedValue([
      token({
        label: "Cur\u200Bsor",
        scope: [
          { id: "proj_a", name: "my\u202Eppa" },
          { id: "proj_b", name: null },
        ],
      }),
    ]);
    render(<App />);
    await user.keyboard("{Control>}2{/Control}");
    const row = await screen.findByTestId("token-row");
    expect(row).toHaveTextContent("my⟨U+202E⟩ppa, (removed project)");
    await user.click(within(row).getByRole("button", { name: "Revoke…" }));
    expect(within(row).getByRole("group")).toHaveTextContent("Revoke Cur⟨U+200B⟩sor? Clients using it");
    expect(row.textContent).not.toMatch(/[\u202E\u200B]/);
  });

  it("shows a token that limited itself and restores it through the native confirmation", async () => {
    const user = userEvent.setup();
    m.listTokens.mockResolvedValue([
      token({ selfLimit: "paused", selfLimitedMs: Date.now() - 60_000 }),
      token({ id: "tok_bbbbbbbbbbbbbbbb", label: "Zed", selfLimit: "read-only" }),
      token({ id: "tok_cccccccccccccccc", label: "Codex" }),
    ]);
    m.restoreToken.mockResolvedValue(token());
    render(<App />);
    await user.keyboard("{Control>}2{/Control}");
    const rows = await screen.findAllByTestId("token-row");
    expect(within(rows[0]).getByTestId("token-self-limit")).toHaveTextContent("Paused itself");
    expect(within(rows[1]).getByTestId("token-self-limit")).toHaveTextContent("Read-only by its own choice");
    expect(within(rows[2]).queryByTestId("token-self-limit")).toBeNull();
    // The page only asks for it: the engine's side confirms natively before anything widens.
    await user.click(within(rows[1]).getByRole("button", { name: "Restore…" }));
    expect(m.restoreToken).toHaveBeenCalledWith("tok_bbbbbbbbbbbbbbbb");
  });

  it("revokes after confirmation and reloads on the event", async () => {
    const user = userEvent.setup();
    m.listTokens.mockResolvedValue([token({ lastUsedMs: Date.now() - 120_000 })]);
    m.revokeToken.mockResolvedValue(token());
    render(<App />);
    await user.keyboard("{Control>}2{/Control}");
    const row = await screen.findByTestId("token-row");
    expect(within(row).getByTestId("token-last-used")).toHaveTextContent("2 minutes ago");
    await user.click(within(row).getByRole("button", { name: "Revoke…" }));
    await user.click(within(row).getByRole("button", { name: "Revoke" }));
    expect(m.revokeToken).toHaveBeenCalledWith(token().id);
    m.listTokens.mockResolvedValue([token({ revokedMs: Date.now() })]);
    act(() => emit({ kind: "tokensChanged" }));
    expect(await within(await screen.findByTestId("token-row")).findByText("Revoked")).toBeInTheDocument();
  });
});

describe("activity and settings", () => {
  it("lists the audit log with filters and the chain status", async () => {
    const user = userEvent.setup();
    m.listTokens.mockResolvedValue([token()]);
    m.audit.mockResolvedValue({
      entries: [
        {
          seq: 2, timeMs: Date.now(), actor: "Cursor", byAssistant: true, tokenId: token().id,
          action: "read_file", projectId: project().id, projectName: "my-app", outcome: "ok",
          errorCode: null, durationMs: 3, detail: null,
        },
      ],
    });
    m.verifyAudit.mockResolvedValue({ entries: 2, intact: true, breakAt: null, breakReason: null });
    render(<App />);
    await user.keyboard("{Control>}5{/Control}");
    expect(await screen.findByTestId("chain-status")).toHaveTextContent("Audit chain intact — 2 entries verified");
    expect(await screen.findByText("read_file")).toBeInTheDocument();
    await user.selectOptions(screen.getByRole("combobox", { name: "Outcome" }), "denied");
    expect(m.audit).toHaveBeenLastCalledWith(expect.objectContaining({ outcome: "denied", limit: 200 }));
    await user.selectOptions(screen.getByRole("combobox", { name: "Token" }), token().id);
    expect(m.audit).toHaveBeenLastCalledWith(expect.objectContaining({ token: token().id }));
  });

  it("shows what an approval said would run on its own", async () => {
    const user = userEvent.setup();
    m.audit.mockResolvedValue({
      entries: [
        {
          seq: 5, timeMs: Date.now(), actor: "Cursor", byAssistant: true, tokenId: token().id,
          action: "approval.requested", projectId: project().id, projectName: "my-app",
          outcome: "ok", errorCode: null, durationMs: 0,
          detail: "runs on its own: .mcp.json: Claude Code and VS Code's agent offer to start the MCP servers in this file",
        },
      ],
    });
    render(<App />);
    await user.keyboard("{Control>}5{/Control}");
    const row = await screen.findByTestId("audit-row");
    expect(within(row).getByTestId("audit-detail")).toHaveTextContent("runs on its own: .mcp.json: Claude Code");
  });

  it("shows relative times with the exact time on hover, and filter names made visible", async () => {
    const user = userEvent.setup();
    const at = Date.now() - 3 * 60_000;
    m.listTokens.mockResolvedValue([token({ label: "Cur\u202Esor" })]);
    m.listProjects.mockResolvedValue([project({ name: "my\u200Bapp" })]);
    m.audit.mockResolvedValue({
      entries: [
        {
          seq: 1, timeMs: at, actor: "Cur\u202Esor", byAssistant: true, tokenId: token().id,
          action: "read_file", projectId: project().id, projectName: "my\u200Bapp", outcome: "ok",
          errorCode: null, durationMs: 3, detail: null,
        },
      ],
    });
    render(<App />);
    await user.keyboard("{Control>}5{/Control}");
    const row = await screen.findByTestId("audit-row");
    const when = within(row).getByText("3 minutes ago");
    expect(when.tagName).toBe("TIME");
    expect(when).toHaveAttribute("title", exactTime(at));
    expect(when).toHaveAttribute("datetime", new Date(at).toISOString());
    expect(row).toHaveTextContent("Cur⟨U+202E⟩sor");
    expect(within(screen.getByRole("combobox", { name: "Token" })).getByRole("option", { name: "Cur⟨U+202E⟩sor" })).toBeInTheDocument();
    expect(within(screen.getByRole("combobox", { name: "Project" })).getByRole("option", { name: "my⟨U+200B⟩app" })).toBeInTheDocument();
    expect(screen.getByRole("region", { name: "Activity" }).textContent).not.toMatch(/[\u202E\u200B]/);
  });

  it("verifies the chain on opening and Refresh only, and pages to older entries", async () => {
    const user = userEvent.setup();
    const entry = (seq: number) => ({
      seq, timeMs: Date.now(), actor: "Cursor", byAssistant: true, tokenId: token().id,
      action: `tool_${seq}`, projectId: null, projectName: null, outcome: "ok" as const,
      errorCode: null, durationMs: 1, detail: null,
    });
    const full = Array.from({ length: PAGE }, (_, i) => entry(PAGE + 10 - i));
    m.audit.mockImplementation(async (q) =>
      q.beforeSeq === null ? { entries: full } : { entries: [entry(3), entry(2)] },
    );
    render(<App />);
    await user.keyboard("{Control>}5{/Control}");
    expect(await screen.findByText("tool_210")).toBeInTheDocument();
    await user.type(screen.getByRole("textbox", { name: "Tool or action" }), "read");
    expect(m.verifyAudit).toHaveBeenCalledTimes(1);
    await user.click(screen.getByRole("button", { name: "Older entries" }));
    expect(m.audit).toHaveBeenLastCalledWith(expect.objectContaining({ beforeSeq: 11, action: "read" }));
    expect(await screen.findByText("tool_2")).toBeInTheDocument();
    expect(screen.getAllByTestId("audit-row")).toHaveLength(PAGE + 2);
    expect(screen.queryByRole("button", { name: "Older entries" })).toBeNull();
    await user.click(screen.getByRole("button", { name: "Refresh" }));
    expect(m.verifyAudit).toHaveBeenCalledTimes(2);
  });

  it("says where the chain breaks", async () => {
    m.verifyAudit.mockResolvedValue({ entries: 9, intact: false, breakAt: 7, breakReason: "MAC mismatch" });
    const user = userEvent.setup();
    render(<App />);
    await user.keyboard("{Control>}5{/Control}");
    expect(await screen.findByTestId("chain-status")).toHaveTextContent("broken at entry 7: MAC mismatch");
  });

  it("counts verified entries in the user's words", async () => {
    m.verifyAudit.mockResolvedValue({ entries: 12_408, intact: true, breakAt: null, breakReason: null });
    const user = userEvent.setup();
    const { unmount } = render(<App />);
    await user.keyboard("{Control>}5{/Control}");
    expect(await screen.findByTestId("chain-status")).toHaveTextContent(
      `Audit chain intact — ${(12_408).toLocaleString()} entries verified.`,
    );
    unmount();
    m.verifyAudit.mockResolvedValue({ entries: 1, intact: true, breakAt: null, breakReason: null });
    render(<App />);
    await user.keyboard("{Control>}5{/Control}");
    expect(await screen.findByTestId("chain-status")).toHaveTextContent("Audit chain intact — 1 entry verified.");
  });

  it("copies diagnostics without tokens or the user name", async () => {
    const user = userEvent.setup();
    render(<App />);
    await screen.findByTestId("state-pill");
    await user.keyboard("{Control>}6{/Control}");
    await user.click(screen.getByRole("button", { name: "Copy diagnostics" }));
    const [text, secret] = m.copy.mock.calls.at(-1)!;
    expect(secret).toBe(false);
    expect(text).toContain("Sluice 0.1.0");
    expect(text).toContain("MCP endpoint: http://127.0.0.1:7457/mcp");
    expect(text).toContain("Data folder: ~/.local/share/sluice");
    expect(text).not.toContain("/home/me");
    expect(screen.getByRole("region", { name: "Settings" })).toHaveTextContent("Copied: version");
  });

  it("writes any home folder as ~ in diagnostics", () => {
    for (const [dir, shown] of [
      ["/Users/ana/Library/Application Support/sluice", "~/Library/Application Support/sluice"],
      ["C:\\Users\\ana\\AppData\\Roaming\\sluice", "~\\AppData\\Roaming\\sluice"],
      ["/root/.local/share/sluice", "~/.local/share/sluice"],
      ["/srv/sluice", "/srv/sluice"],
    ]) {
      expect(diagnostics(state({ dataDir: dir }), "Linux x86_64")).toContain(`Data folder: ${shown}`);
    }
  });

  it("shows port, data folder, secret storage and version", async () => {
    const user = userEvent.setup();
    render(<App />);
    await screen.findByTestId("state-pill");
    await user.keyboard("{Control>}6{/Control}");
    const s = screen.getByRole("region", { name: "Settings" });
    expect(s).toHaveTextContent("http://127.0.0.1:7457/mcp");
    expect(s).toHaveTextContent("/home/me/.local/share/sluice");
    expect(s).toHaveTextContent("Not in the keychain because: no Secret Service");
    expect(s).toHaveTextContent("0.1.0");
  });

  it("says the port is served by this Sluice and checks another before it is chosen", async () => {
    const user = userEvent.setup();
    render(<App />);
    await screen.findByTestId("state-pill");
    await user.keyboard("{Control>}6{/Control}");
    const s = screen.getByRole("region", { name: "Settings" });
    expect(await within(s).findByTestId("port-status")).toHaveTextContent(
      "Port 7457 is served by this Sluice: its MCP endpoint listens there.",
    );
    expect(m.checkPort).toHaveBeenCalledWith(7457);
    const field = within(s).getByRole("textbox", { name: "Check another port" });
    const check = within(s).getByRole("button", { name: "Check" });
    for (const bad of ["", "0", "70000", "80a", "1.5"]) {
      await user.clear(field);
      if (bad) await user.type(field, bad);
      expect(check).toBeDisabled();
    }
    await user.clear(field);
    await user.type(field, "8080{Enter}");
    expect(m.checkPort).toHaveBeenLastCalledWith(8080);
    expect(within(s).getByTestId("port-check")).toHaveTextContent("Port 8080 is free.");
    m.checkPort.mockResolvedValueOnce({ port: 9000, status: "in-use", message: "Port 9000 is in use by another <i>program</i>." });
    await user.clear(field);
    expect(within(s).getByTestId("port-check")).toHaveTextContent("");
    await user.type(field, "9000");
    await user.click(check);
    expect(await within(s).findByTestId("port-check")).toHaveTextContent(
      "Port 9000 is in use by another <i>program</i>.",
    );
    m.checkPort.mockRejectedValueOnce({ code: "invalid_argument", message: "choose a port between 1 and 65535" });
    await user.click(check);
    expect(await within(s).findByRole("alert")).toHaveTextContent("choose a port between 1 and 65535");
  });

  it("warns when this Sluice's own port is no longer served", async () => {
    const user = userEvent.setup();
    m.checkPort.mockResolvedValue({
      port: 7457,
      status: "free",
      message: "Port 7457 is free: Sluice's MCP server is not listening on it any more. Quit and restart Sluice.",
    });
    render(<App />);
    await screen.findByTestId("state-pill");
    await user.keyboard("{Control>}6{/Control}");
    const line = await screen.findByTestId("port-status");
    expect(line).toHaveTextContent("not listening on it any more");
    expect(line).toHaveClass("error");
  });
});

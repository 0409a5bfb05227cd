// One-click Connect and the network setting, with IPC mocked at the api.ts boundary only.
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { beforeEach, describe, expect, it, vi } from "vitest";
import {
  client,
  connectResult,
  created,
  health,
  preview,
  project,
  repairResult,
  token,
} from "../test/fixtures";

vi.mock("../api", () => import("../test/api"));

import { App } from "../App";
import { m, resetApi } from "../test/api";

const CLIENTS = [
  client(),
  client({
    client: "vscode",
    title: "VS Code",
    configPath: "/home/me/.config/Code/User/mcp.json",
    configFound: false,
    plainText: false,
    storage: "The client asks for the token once and keeps it in its secret storage",
  }),
  client({ client: "zed", title: "Zed", configPath: "/home/me/.config/zed/settings.json", connected: true }),
  client({
    client: "http",
    title: "Any Streamable HTTP client",
    hasConfig: false,
    configPath: null,
    configFound: false,
    plainText: false,
  }),
];

async function openClients() {
  const user = userEvent.setup();
  render(<App />);
  await screen.findByTestId("state-pill");
  await user.keyboard("{Control>}7{/Control}");
  await screen.findAllByTestId("client-row");
  return user;
}

beforeEach(() => {
  resetApi();
  m.listProjects.mockResolvedValue([project()]);
  m.listTokens.mockResolvedValue([token({ lastUsedMs: Date.now() })]);
  m.listClients.mockResolvedValue(CLIENTS);
});

describe("the Clients view", () => {
  it("lists each client's file and state, and says who keeps the token in plain text", async () => {
    await openClients();
    const rows = screen.getAllByTestId("client-row");
    expect(rows).toHaveLength(3);
    const cursor = screen.getByRole("row", { name: "Cursor" });
    expect(cursor).toHaveTextContent("/home/me/.cursor/mcp.json");
    expect(cursor).toHaveTextContent("Not connected");
    expect(cursor).toHaveTextContent("Plain text in the file");
    const vscode = screen.getByRole("row", { name: "VS Code" });
    expect(vscode).toHaveTextContent("Connect creates it");
    expect(vscode).toHaveTextContent("asks for the token once");
    const zed = screen.getByRole("row", { name: "Zed" });
    expect(zed).toHaveTextContent("Connected");
    expect(within(zed).getByRole("button", { name: "Disconnect Zed" })).toBeInTheDocument();
    expect(screen.getByTestId("plain-text-clients")).toHaveTextContent(
      "keep the token in plain text in their settings file: Cursor, Zed.",
    );
    // Clients without a file keep the copy path through a new token.
    expect(screen.getByText(/Any Streamable HTTP client: Sluice cannot write these settings/)).toBeInTheDocument();
  });

  it("looks at the files again on Refresh", async () => {
    const user = await openClients();
    m.listClients.mockResolvedValue([client({ connected: true })]);
    await user.click(screen.getByRole("button", { name: "Refresh" }));
    expect(await screen.findByRole("button", { name: "Disconnect Cursor" })).toBeInTheDocument();
    expect(m.listClients).toHaveBeenCalledTimes(2);
  });

  it("shows the exact change, writes only on Apply, then the check's result", async () => {
    m.connectPreview.mockResolvedValue(preview());
    m.connectApply.mockResolvedValue(connectResult());
    const user = await openClients();
    await user.click(screen.getByRole("button", { name: "Connect Cursor" }));
    expect(m.connectPreview).toHaveBeenCalledWith("cursor");
    const panel = screen.getByRole("region", { name: "Connect Cursor" });
    expect(panel).toHaveTextContent("Sluice will change /home/me/.cursor/mcp.json");
    expect(within(panel).getByTestId("plain-text-warning")).toHaveTextContent("plain text in this file");
    const diff = within(panel).getByTestId("diff");
    expect(diff.textContent).toBe(preview().diff);
    const added = [...diff.querySelectorAll(".diff-add")].map((l) => l.textContent);
    expect(added).toContain('+    "sluice": {\n');
    expect([...diff.querySelectorAll(".diff-del")].map((l) => l.textContent)).toEqual(['-    "github": {}\n']);
    expect(m.connectApply).not.toHaveBeenCalled();

    m.listClients.mockResolvedValue([client({ connected: true }), ...CLIENTS.slice(1)]);
    await user.click(within(panel).getByRole("button", { name: "Apply and connect" }));
    expect(m.connectApply).toHaveBeenCalledWith(preview().id);
    expect(await screen.findByTestId("check-result")).toHaveTextContent(
      "Connected: list_projects answered, 1 project(s) visible",
    );
    const done = screen.getByRole("region", { name: "Connected Cursor" });
    expect(done).toHaveTextContent("mcp.json.bak-20261130T090000Z");
    expect(done).toHaveTextContent("Cursor (sluice connect)");
    expect(screen.queryByRole("region", { name: "Connect Cursor" })).toBeNull();
    expect(await screen.findByRole("button", { name: "Disconnect Cursor" })).toBeInTheDocument();
  });

  it("UI-03: renders the diff as text, never as HTML", async () => {
    m.connectPreview.mockResolvedValue(
      preview({ diff: '+  "x": "<img src=x onerror=alert(1)>\u202Etxt"\n' }),
    );
    const user = await openClients();
    await user.click(screen.getByRole("button", { name: "Connect Cursor" }));
    const diff = screen.getByTestId("diff");
    expect(diff.querySelector("img")).toBeNull();
    expect(diff).toHaveTextContent('"<img src=x onerror=alert(1)>⟨U+202E⟩txt"');
  });

  it("cancels without writing", async () => {
    m.connectPreview.mockResolvedValue(preview());
    const user = await openClients();
    await user.click(screen.getByRole("button", { name: "Connect Cursor" }));
    await user.click(screen.getByRole("button", { name: "Cancel" }));
    expect(screen.queryByTestId("diff")).toBeNull();
    expect(m.connectApply).not.toHaveBeenCalled();
  });

  it("shows a failed check and a file that changed since the preview", async () => {
    m.connectPreview.mockResolvedValue(preview());
    m.connectApply.mockResolvedValueOnce(
      connectResult({ check: { ok: false, message: "the engine refused the token: unauthorized" } }),
    );
    const user = await openClients();
    await user.click(screen.getByRole("button", { name: "Connect Cursor" }));
    await user.click(screen.getByRole("button", { name: "Apply and connect" }));
    expect(await screen.findByTestId("check-result")).toHaveTextContent(
      "Written, but the connection check failed: the engine refused the token: unauthorized",
    );

    m.connectApply.mockRejectedValueOnce({
      code: "config_changed",
      message: "/home/me/.cursor/mcp.json changed since the preview; nothing was written",
    });
    await user.click(screen.getByRole("button", { name: "Connect Cursor" }));
    await user.click(screen.getByRole("button", { name: "Apply and connect" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("changed since the preview; nothing was written");
  });

  it("shows a token the client asks for once, with Copy", async () => {
    m.connectPreview.mockResolvedValue(
      preview({ client: "vscode", title: "VS Code", plainText: false, storage: "The client asks for the token once" }),
    );
    const secret = "slc_" + "b".repeat(52);
    m.connectApply.mockResolvedValue(
      connectResult({
        client: "vscode",
        title: "VS Code",
        plainText: false,
        secret,
        secretHint: "VS Code asks for the token once: paste this token then. It is not shown again.",
      }),
    );
    const user = await openClients();
    await user.click(screen.getByRole("button", { name: "Connect VS Code" }));
    const panel = screen.getByRole("region", { name: "Connect VS Code" });
    expect(within(panel).queryByTestId("plain-text-warning")).toBeNull();
    expect(panel).toHaveTextContent("The client asks for the token once.");
    await user.click(within(panel).getByRole("button", { name: "Apply and connect" }));
    const done = await screen.findByRole("region", { name: "Connected VS Code" });
    expect(within(done).getByRole("textbox", { name: "The new token" })).toHaveValue(secret);
    await user.click(within(done).getByRole("button", { name: "Copy" }));
    expect(m.copy).toHaveBeenCalledWith(secret, true);
  });

  it("disconnects after showing what is removed", async () => {
    m.disconnectPreview.mockResolvedValue(
      preview({
        client: "zed",
        title: "Zed",
        path: "/home/me/.config/zed/settings.json",
        diff: '--- a\n+++ a\n-    "sluice": {}\n',
        plainText: false,
        storage: null,
      }),
    );
    m.disconnectApply.mockResolvedValue({
      client: "zed",
      title: "Zed",
      path: "/home/me/.config/zed/settings.json",
      removed: true,
      backup: "/home/me/.config/zed/settings.json.bak-1",
      forgotStoredToken: false,
    });
    const user = await openClients();
    await user.click(screen.getByRole("button", { name: "Disconnect Zed" }));
    const panel = screen.getByRole("region", { name: "Disconnect Zed" });
    expect(panel).toHaveTextContent("only Sluice's entry is removed");
    const removed = within(panel).getByTestId("diff").querySelectorAll(".diff-del");
    expect([...removed].map((l) => l.textContent)).toEqual(['-    "sluice": {}\n']);
    await user.click(within(panel).getByRole("button", { name: "Apply and disconnect" }));
    expect(m.disconnectApply).toHaveBeenCalledWith(preview().id);
    const done = await screen.findByRole("region", { name: "Disconnected Zed" });
    expect(done).toHaveTextContent("Removed Sluice from Zed's settings.");
    expect(done).toHaveTextContent("keeps working until you revoke it");
  });

  it("refuses Connect for a file that does not parse, saying why", async () => {
    m.listClients.mockResolvedValue([
      client({ problem: "/home/me/.cursor/mcp.json: expected a value. The file was left untouched." }),
    ]);
    await openClients();
    const row = screen.getByRole("row", { name: "Cursor" });
    expect(row).toHaveTextContent("Cannot use the file");
    expect(within(row).getByRole("button", { name: "Connect Cursor" })).toBeDisabled();
  });
});

describe("client health and repair", () => {
  const PORT_CHANGED = health({
    state: "broken",
    code: "port_changed",
    reason: "the entry points at port 7000; Sluice now listens on port 7457",
    repairable: true,
  });

  it("says per client whether the entry works, why not, and where the token lives", async () => {
    m.clientHealth.mockResolvedValue([
      PORT_CHANGED,
      health({
        client: "vscode",
        title: "VS Code",
        state: "unverified",
        code: "token_kept_by_client",
        reason: "The port (7457) is right; the token is not in the file, so Sluice cannot check it",
        tokenLocation: "in the client's own secret storage",
      }),
      health({ client: "zed", title: "Zed", reason: "list_projects answered, 1 project(s) visible" }),
    ]);
    await openClients();
    const cursor = screen.getByRole("row", { name: "Cursor" });
    const line = await within(cursor).findByTestId("health");
    expect(line).toHaveAttribute("data-code", "port_changed");
    expect(line).toHaveTextContent("Broken: the entry points at port 7000; Sluice now listens on port 7457");
    expect(line).toHaveTextContent("Token: in plain text in the client's file.");
    expect(within(cursor).getByRole("button", { name: "Repair Cursor" })).toBeInTheDocument();
    const vscode = screen.getByRole("row", { name: "VS Code" });
    expect(within(vscode).getByTestId("health")).toHaveTextContent("Not verified: The port (7457) is right");
    expect(within(vscode).getByTestId("health")).toHaveTextContent("Token: in the client's own secret storage.");
    expect(within(vscode).queryByRole("button", { name: "Repair VS Code" })).toBeNull();
    const zed = screen.getByRole("row", { name: "Zed" });
    expect(within(zed).getByTestId("health")).toHaveTextContent("Working: list_projects answered");
    expect(within(zed).queryByRole("button", { name: "Repair Zed" })).toBeNull();
  });

  it("shows the repair's exact change and what happens to the token, writes only on Apply", async () => {
    m.clientHealth.mockResolvedValue([PORT_CHANGED]);
    const diff =
      '--- /home/me/.cursor/mcp.json\n+++ /home/me/.cursor/mcp.json\n@@ -1,3 +1,3 @@\n-      "url": "http://127.0.0.1:7000/mcp",\n+      "url": "http://127.0.0.1:7457/mcp",\n         "Authorization": "Bearer <current token, unchanged>"\n';
    m.repairPreview.mockResolvedValue(
      preview({ diff, note: "The token already in the entry still works and is kept." }),
    );
    m.repairApply.mockResolvedValue(repairResult());
    const user = await openClients();
    await user.click(await screen.findByRole("button", { name: "Repair Cursor" }));
    expect(m.repairPreview).toHaveBeenCalledWith("cursor");
    const panel = screen.getByRole("region", { name: "Repair Cursor" });
    expect(panel).toHaveTextContent("only Sluice's entry is rewritten");
    expect(within(panel).getByTestId("repair-note")).toHaveTextContent("still works and is kept");
    expect(within(panel).getByTestId("diff").textContent).toBe(diff);
    expect(m.repairApply).not.toHaveBeenCalled();

    m.clientHealth.mockResolvedValue([health()]);
    await user.click(within(panel).getByRole("button", { name: "Apply repair" }));
    expect(m.repairApply).toHaveBeenCalledWith(preview().id);
    expect(await screen.findByTestId("repair-result")).toHaveTextContent(
      "Repaired and working: list_projects answered, 1 project(s) visible",
    );
    const done = screen.getByRole("region", { name: "Repaired Cursor" });
    expect(done).toHaveTextContent("mcp.json.bak-20261130T090000Z");
    // The list and the health are read again: the button is gone with the problem.
    expect(await within(screen.getByRole("row", { name: "Cursor" })).findByTestId("health")).toHaveAttribute(
      "data-state",
      "working",
    );
    expect(screen.queryByRole("button", { name: "Repair Cursor" })).toBeNull();
  });

  it("says when the repair was written but the entry still does not work", async () => {
    m.clientHealth.mockResolvedValue([PORT_CHANGED]);
    m.repairPreview.mockResolvedValue(preview({ note: "A new token is created for the entry." }));
    m.repairApply.mockResolvedValue(
      repairResult({
        tokenLabel: "Cursor (sluice connect) #2",
        health: health({ state: "broken", code: "check_failed", reason: "unexpected answer (HTTP/1.1 500)" }),
      }),
    );
    const user = await openClients();
    await user.click(await screen.findByRole("button", { name: "Repair Cursor" }));
    await user.click(screen.getByRole("button", { name: "Apply repair" }));
    const result = await screen.findByTestId("repair-result");
    expect(result).toHaveClass("error");
    expect(result).toHaveTextContent("Written; now broken: unexpected answer (HTTP/1.1 500)");
    expect(screen.getByRole("region", { name: "Repaired Cursor" })).toHaveTextContent(
      "New token: Cursor (sluice connect) #2.",
    );
  });
});

describe("client snippets in Tokens", () => {
  it("carry the install link, the note and whether the token is in plain text", async () => {
    m.createToken.mockResolvedValue(created());
    const user = userEvent.setup();
    render(<App />);
    await screen.findByTestId("state-pill");
    await user.keyboard("{Control>}2{/Control}");
    await user.click(screen.getAllByRole("button", { name: "New token" }).at(-1)!);
    await user.type(screen.getByRole("textbox", { name: /Label/ }), "x");
    await user.click(screen.getByRole("button", { name: "Create token" }));
    const panel = await screen.findByRole("region", { name: "New token created" });
    await user.click(within(panel).getByRole("tab", { name: "Cursor" }));
    expect(within(panel).getByTestId("snippet-plain-text")).toHaveTextContent("plain text");
    await user.click(within(panel).getByRole("button", { name: "Copy Cursor install link" }));
    expect(m.copy).toHaveBeenCalledWith(created().snippets[1].link, false);
    // Beside the link, exactly what it installs (the MCP spec asks installs to show it).
    expect(within(panel).getByLabelText("What the Cursor install link installs")).toHaveTextContent(
      "Bearer ${env:SLUICE_TOKEN}",
    );
    await user.click(within(panel).getByRole("tab", { name: "Codex" }));
    expect(within(panel).queryByTestId("snippet-plain-text")).toBeNull();
    expect(within(panel).getByRole("tabpanel")).toHaveTextContent("Set SLUICE_TOKEN");
  });
});

describe("network for commands", () => {
  it("shows the setting per project and changes it", async () => {
    m.listProjects.mockResolvedValue([
      project({ access: "read-write", exec: "project", network: null, networkMode: "registries" }),
    ]);
    m.setProjectNetwork.mockResolvedValue(project({ network: "off" }));
    const user = userEvent.setup();
    render(<App />);
    expect(await screen.findByTestId("project-network")).toHaveTextContent(
      "package registries only (default for this mode)",
    );
    await user.click(screen.getByRole("button", { name: "my-app" }));
    const detail = screen.getByRole("region", { name: "Project my-app" });
    expect(within(detail).getByTestId("network-state")).toHaveTextContent(
      "Network for commands: package registries only (default for this mode)",
    );
    const group = within(detail).getByRole("group", { name: "Network setting" });
    expect(within(group).getByRole("button", { name: "Mode default" })).toHaveAttribute("aria-pressed", "true");
    await user.click(within(group).getByRole("button", { name: "Off" }));
    expect(m.setProjectNetwork).toHaveBeenCalledWith({ id: project().id, network: "off" });
  });

  it("says when the user set it, and shows a refusal from the confirmation", async () => {
    m.listProjects.mockResolvedValue([project({ exec: "any", access: "read-write", network: "off" })]);
    m.setProjectNetwork.mockRejectedValue({ code: "denied", message: 'nothing changed: you chose "Keep off"' });
    const user = userEvent.setup();
    render(<App />);
    expect(await screen.findByTestId("project-network")).toHaveTextContent("off (set by you)");
    await user.click(screen.getByRole("button", { name: "my-app" }));
    const group = screen.getByRole("group", { name: "Network setting" });
    expect(within(group).getByRole("button", { name: "Off" })).toHaveAttribute("aria-pressed", "true");
    await user.click(within(group).getByRole("button", { name: "Registries" }));
    expect(m.setProjectNetwork).toHaveBeenCalledWith({ id: project().id, network: "registries" });
    expect(await screen.findByRole("alert")).toHaveTextContent("you chose");
  });
});

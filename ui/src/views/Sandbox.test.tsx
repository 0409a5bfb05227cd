// The commands' sandbox of a project (Projects view), on approval cards and in Settings, with
// IPC mocked at the api.ts boundary only.
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { approval, project, sandbox, state, token } from "../test/fixtures";

vi.mock("../api", () => import("../test/api"));

import { App } from "../App";
import { ApiError, m, resetApi } from "../test/api";
import { ApprovalsView } from "./Approvals";
import { SettingsView } from "./Settings";

beforeEach(() => {
  resetApi();
  m.listTokens.mockResolvedValue([token()]);
});

async function openSandbox(p = project()) {
  const user = userEvent.setup();
  m.listProjects.mockResolvedValue([p]);
  m.setSandbox.mockResolvedValue(p);
  render(<App />);
  await user.click(await screen.findByRole("button", { name: p.name }));
  const detail = screen.getByRole("region", { name: `Project ${p.name}` });
  return { user, detail, box: within(detail).getByRole("group", { name: "Sandbox" }) };
}

const none = { hide: [], unhide: [], grants: [], sockets: [], requireFull: false };

describe("a project's sandbox", () => {
  it("shows the layers, the guarantees and the hidden list folded with its count", async () => {
    const { box } = await openSandbox();
    expect(within(box).getByTestId("sandbox-layers")).toHaveTextContent("Namespaces — every layer holds.");
    expect(within(box).getByRole("list", { name: "Guarantees" })).toHaveTextContent(
      "✓ holds: the rest of the machine out of sight",
    );
    expect(within(box).getByTestId("sandbox-hidden-count")).toHaveTextContent(
      "3 credential stores hidden (2 on this machine)",
    );
    expect(box).toHaveTextContent("~/.npmrc — npm registry tokens");
    expect(box).toHaveTextContent("None: commands read no credential store.");
    expect(box).toHaveTextContent("None: commands reach no socket outside their project.");
  });

  it("hides a path, un-hides a default, grants a store and allows a socket", async () => {
    const { user, box } = await openSandbox();
    await user.type(within(box).getByRole("textbox", { name: "Path to hide" }), " ~/.config/tool ");
    await user.click(within(box).getByRole("button", { name: "Hide" }));
    expect(m.setSandbox).toHaveBeenLastCalledWith(project().id, { ...none, hide: ["~/.config/tool"] });
    expect(within(box).getByRole("textbox", { name: "Path to hide" })).toHaveValue("");
    await user.click(within(box).getByRole("button", { name: "Un-hide ~/.aws" }));
    expect(m.setSandbox).toHaveBeenLastCalledWith(project().id, { ...none, unhide: ["~/.aws"] });
    await user.type(within(box).getByRole("textbox", { name: "Store to grant" }), "~/.npmrc");
    await user.click(within(box).getByRole("button", { name: "Grant…" }));
    expect(m.setSandbox).toHaveBeenLastCalledWith(project().id, { ...none, grants: ["~/.npmrc"] });
    await user.type(within(box).getByRole("textbox", { name: "Socket to allow" }), "/var/run/docker.sock");
    await user.click(within(box).getByRole("button", { name: "Allow socket…" }));
    expect(m.setSandbox).toHaveBeenLastCalledWith(project().id, {
      ...none,
      sockets: ["/var/run/docker.sock"],
    });
    await user.click(within(box).getByRole("checkbox", { name: /Require full confinement/ }));
    expect(m.setSandbox).toHaveBeenLastCalledWith(project().id, { ...none, requireFull: true });
  });

  it("shows grants and sockets with what they expose, and removes them", async () => {
    const p = project({
      sandbox: sandbox({
        grants: [{ path: "~/.npmrc", holds: "npm registry tokens", default: false, present: true }],
        sockets: ["/var/run/docker.sock"],
        hidden: [{ path: "~/.config/tool", holds: null, default: false, present: false }],
        settings: { ...none, hide: ["~/.config/tool"], grants: ["~/.npmrc"], sockets: ["/var/run/docker.sock"] },
      }),
    });
    const { user, box } = await openSandbox(p);
    expect(within(box).getByRole("list", { name: "Granted stores" })).toHaveTextContent(
      "Commands can read ~/.npmrc (npm registry tokens), read-only.",
    );
    expect(within(box).getByTestId("sandbox-socket")).toHaveTextContent(
      "Commands can connect to /var/run/docker.sock: equivalent to full access to this machine",
    );
    await user.click(within(box).getByRole("button", { name: "Revoke ~/.npmrc" }));
    expect(m.setSandbox).toHaveBeenLastCalledWith(p.id, { ...p.sandbox.settings, grants: [] });
    await user.click(within(box).getByRole("button", { name: "Remove socket /var/run/docker.sock" }));
    expect(m.setSandbox).toHaveBeenLastCalledWith(p.id, { ...p.sandbox.settings, sockets: [] });
    await user.click(within(box).getByRole("button", { name: "Stop hiding ~/.config/tool" }));
    expect(m.setSandbox).toHaveBeenLastCalledWith(p.id, { ...p.sandbox.settings, hide: [] });
  });

  it("shows a refusal from the native dialog and keeps the typed path", async () => {
    const { user, detail, box } = await openSandbox();
    m.setSandbox.mockRejectedValueOnce({ code: "denied", message: 'nothing changed: you chose "Keep as is"' });
    await user.type(within(box).getByRole("textbox", { name: "Store to grant" }), "~/.npmrc");
    await user.click(within(box).getByRole("button", { name: "Grant…" }));
    expect(await within(detail).findByText(/Keep as is/)).toBeInTheDocument();
    expect(within(box).getByRole("textbox", { name: "Store to grant" })).toHaveValue("~/.npmrc");
  });

  it("says the fallback holds less, and why a project that requires full confinement refuses", async () => {
    const p = project({
      sandbox: sandbox({
        namespaces: false,
        full: false,
        requireFull: true,
        refusal: "this project requires full confinement for its commands, but no namespaces",
        guarantees: [{ what: "other processes invisible", holds: false }],
        settings: { ...none, requireFull: true },
      }),
    });
    const { box } = await openSandbox(p);
    expect(within(box).getByTestId("sandbox-layers")).toHaveTextContent("Fallback: Landlock and seccomp alone");
    expect(within(box).getByTestId("sandbox-refusal")).toHaveTextContent("requires full confinement");
    expect(within(box).getByRole("list", { name: "Guarantees" })).toHaveTextContent(
      "✗ does not hold: other processes invisible",
    );
    expect(within(box).getByRole("checkbox", { name: /Require full confinement/ })).toBeChecked();
  });

  it("renders paths as text, never as markup", async () => {
    const p = project({
      sandbox: sandbox({
        hidden: [{ path: "~/<img src=x onerror=alert(1)>", holds: null, default: false, present: true }],
      }),
    });
    const { box } = await openSandbox(p);
    expect(box).toHaveTextContent("~/<img src=x onerror=alert(1)>");
    expect(box.querySelector("img")).toBeNull();
  });
});

describe("the sandbox elsewhere", () => {
  it("shows on an approval card: layers, hidden count, grants and sockets with warnings", () => {
    const sb = sandbox({
      grants: [{ path: "~/.npmrc", holds: "npm registry tokens", default: false, present: true }],
      sockets: ["/var/run/docker.sock"],
    });
    render(
      <ApprovalsView
        approvals={[
          approval({
            tool: "run_command",
            command: { argv: ["/usr/bin/npm", "test"], cwd: "", env: [], network: "off", confinement: "x", sandbox: sb },
          }),
        ]}
        paused={false}
        reload={async () => {}}
      />,
    );
    const summary = screen.getByTestId("sandbox-summary");
    expect(summary).toHaveTextContent("Sandbox: Namespaces — every layer holds.");
    expect(within(summary).getByTestId("sandbox-hidden-count")).toHaveTextContent("3 credential stores hidden");
    expect(within(summary).getByTestId("sandbox-grant")).toHaveTextContent(
      "Can read ~/.npmrc (npm registry tokens), read-only.",
    );
    expect(within(summary).getByTestId("sandbox-socket")).toHaveTextContent("full access to this machine");
    // The command's own tokens are not mixed with the sandbox's lists.
    const cmd = screen.getByTestId("approval-command");
    expect(within(cmd).getAllByRole("listitem").map((li) => li.textContent)).toEqual(["/usr/bin/npm", "test"]);
  });

  it("shows in Settings which guarantees hold here", () => {
    render(
      <SettingsView
        state={state({
          namespaces: false,
          guarantees: [
            { what: "writes only in the project and the job's private folders", holds: true },
            { what: "other processes invisible", holds: false },
          ],
        })}
      />,
    );
    expect(screen.getByTestId("confinement-layers")).toHaveTextContent("Fallback: Landlock and seccomp alone");
    const list = screen.getByRole("list", { name: "Guarantees" });
    expect(list).toHaveTextContent("✓ holds: writes only in the project");
    expect(list).toHaveTextContent("✗ does not hold: other processes invisible");
  });

  it("offers no sandbox account off Windows", () => {
    render(<SettingsView state={state()} />);
    expect(screen.queryByTestId("sandbox-account")).toBeNull();
  });

  it("sets up the Windows sandbox account from Settings and shows what Windows refused", async () => {
    const user = userEvent.setup();
    const onState = vi.fn();
    const after = state({ sandboxAccount: "set-up", confinement: "jobs run as the sandbox account SluiceSandbox" });
    m.setUpSandboxAccount.mockResolvedValue({ refused: ["C:\\Users\\me\\.ssh: access denied"], state: after });
    render(<SettingsView state={state({ sandboxAccount: "not-set-up" })} onState={onState} />);
    const box = screen.getByTestId("sandbox-account");
    expect(box).toHaveTextContent("cannot read your profile, your credential stores or Sluice's data");
    await user.click(within(box).getByRole("button", { name: "Set up the sandbox account…" }));
    expect(m.setUpSandboxAccount).toHaveBeenCalledTimes(1);
    expect(onState).toHaveBeenCalledWith(after);
    expect(within(box).getByRole("list", { name: "Refused rules" })).toHaveTextContent(
      "C:\\Users\\me\\.ssh: access denied",
    );
  });

  it("offers a repair when part is missing, says a refusal, and says how to remove a set-up account", async () => {
    const user = userEvent.setup();
    m.setUpSandboxAccount.mockRejectedValue(
      new ApiError({ code: "confinement_unavailable", message: "the setup failed: consent refused" }),
    );
    const { unmount } = render(<SettingsView state={state({ sandboxAccount: "partial" })} />);
    await user.click(screen.getByRole("button", { name: "Repair the sandbox account…" }));
    expect(await screen.findByText(/consent refused/)).toBeInTheDocument();
    unmount();
    render(<SettingsView state={state({ sandboxAccount: "set-up" })} />);
    expect(screen.queryByRole("button", { name: /sandbox account/ })).toBeNull();
    expect(screen.getByTestId("sandbox-account")).toHaveTextContent("sluice sandbox teardown");
  });
});

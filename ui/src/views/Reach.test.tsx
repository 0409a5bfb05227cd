// Reach from the web in Settings, and remote tokens in Tokens, with IPC mocked at the api.ts
// boundary only.
import { act, fireEvent, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { connectionRequest, project, reachOff, reachOn, token } from "../test/fixtures";

vi.mock("../api", () => import("../test/api"));

import { App } from "../App";
import { ApiError, emit, m, resetApi } from "../test/api";
import { INERT_MS } from "./Approvals";

beforeEach(() => {
  vi.useFakeTimers({ shouldAdvanceTime: true });
  resetApi();
  m.listProjects.mockResolvedValue([
    project(),
    project({ id: "proj_bbbbbbbbbbbbbbbb", name: "other", root: "/home/me/code/other" }),
  ]);
  m.listTokens.mockResolvedValue([token()]);
});

afterEach(() => {
  vi.useRealTimers();
});

const setup = () => userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
const arm = () => act(() => vi.advanceTimersByTime(INERT_MS + 10));

/** The window on Settings; returns the reach panel. */
async function openReach() {
  const user = setup();
  render(<App />);
  await screen.findByTestId("state-pill");
  await user.click(screen.getByRole("button", { name: "Settings" }));
  return { user, panel: await screen.findByTestId("reach") };
}

describe("reach from the web, while off", () => {
  it("is off by default and says in a sentence what it is", async () => {
    const { panel } = await openReach();
    expect(within(panel).getByTestId("reach-status")).toHaveTextContent(
      "Off. Turned on, ChatGPT and Claude.ai can use the projects you choose through a tunnel: one you run, or one Sluice runs for you",
    );
    expect(within(panel).getByRole("button", { name: "Turn on…" })).toBeInTheDocument();
    expect(within(panel).queryByTestId("reach-connector-url")).toBeNull();
    expect(m.reachOn).not.toHaveBeenCalled();
  });

  it("turns on read-only by default for the chosen projects, https only", async () => {
    const { user, panel } = await openReach();
    await user.click(within(panel).getByRole("button", { name: "Turn on…" }));
    const form = within(panel).getByRole("form", { name: "Turn on reach from the web" });
    expect(within(form).getByRole("radio", { name: /Read-only \(suggested\)/ })).toBeChecked();
    expect(within(form).getByRole("textbox", { name: /Tunnel port/ })).toHaveValue("7879");
    const url = within(form).getByRole("textbox", { name: /Public URL/ });
    const submit = within(form).getByRole("button", { name: "Turn on" });

    // Plain http and a missing project are refused here, before Sluice is asked.
    await user.type(url, "http://sluice.example.com");
    await user.click(submit);
    expect(within(form).getByRole("alert")).toHaveTextContent("must start with https://");
    await user.clear(url);
    await user.type(url, " https://sluice.example.com ");
    await user.click(submit);
    expect(within(form).getByRole("alert")).toHaveTextContent("at least one project");
    expect(m.reachOn).not.toHaveBeenCalled();

    await user.click(within(form).getByRole("checkbox", { name: "my-app" }));
    m.reachOn.mockResolvedValue(reachOn());
    m.reachState.mockResolvedValue(reachOn());
    await user.click(submit);
    expect(m.reachOn).toHaveBeenCalledWith({
      url: "https://sluice.example.com",
      tunnel: null,
      projects: ["proj_aaaaaaaaaaaaaaaa"],
      write: false,
      port: 7879,
      redirects: null,
    });
    expect(await within(panel).findByTestId("reach-connector-url")).toHaveTextContent(
      "https://sluice.example.com/mcp",
    );
  });

  it("keeps the form and says nothing changed when the native dialog says no", async () => {
    const { user, panel } = await openReach();
    await user.click(within(panel).getByRole("button", { name: "Turn on…" }));
    const form = within(panel).getByRole("form", { name: "Turn on reach from the web" });
    await user.type(within(form).getByRole("textbox", { name: /Public URL/ }), "https://sluice.example.com");
    await user.click(within(form).getByRole("checkbox", { name: "other" }));
    await user.click(within(form).getByRole("radio", { name: /Read and write/ }));
    m.reachOn.mockRejectedValue(new ApiError({ code: "denied", message: 'nothing changed: you chose "Keep as is"' }));
    await user.click(within(form).getByRole("button", { name: "Turn on" }));
    expect(m.reachOn).toHaveBeenCalledWith(
      expect.objectContaining({ projects: ["proj_bbbbbbbbbbbbbbbb"], write: true }),
    );
    expect(within(form).getByRole("alert")).toHaveTextContent("nothing changed");
    expect(within(panel).getByTestId("reach-status")).toHaveTextContent("Off.");
  });
});

describe("reach from the web, while on", () => {
  it("shows the connector URL with Copy, the tunnel and the connector steps", async () => {
    m.reachState.mockResolvedValue(reachOn({ remoteTokens: 2 }));
    const { user, panel } = await openReach();
    expect(within(panel).getByTestId("reach-status")).toHaveTextContent(
      "On. Assistants you approve may only read in my-app.",
    );
    await user.click(within(panel).getByRole("button", { name: "Copy" }));
    expect(m.copy).toHaveBeenCalledWith("https://sluice.example.com/mcp", false);
    expect(panel).toHaveTextContent("Copied.");
    expect(panel).toHaveTextContent("forward https://sluice.example.com to http://127.0.0.1:7879");
    expect(within(panel).getByTestId("reach-remote-tokens")).toHaveTextContent("2 remote tokens live");
    const steps = within(panel).getByTestId("reach-steps");
    expect(steps).toHaveTextContent("Claude.ai: Settings → Connectors → Add custom connector");
    expect(steps).toHaveTextContent("ChatGPT: Settings → Apps → Advanced → Developer mode");
    expect(within(panel).getByTestId("reach-no-requests")).toBeInTheDocument();
    expect(panel.querySelector("a")).toBeNull();
  });

  it("shows the tunnel Sluice runs, waiting for its address, and what it last said as text", async () => {
    const base = reachOn().setting!;
    const said = 'ERR <img src=x onerror="alert(1)"> retrying\u202E';
    m.reachState.mockResolvedValue(
      reachOn({
        setting: {
          ...base,
          publicUrl: null,
          connectorUrl: null,
          givenUrl: null,
          tunnel: {
            name: "a Cloudflare quick tunnel",
            state: "restarting",
            restarts: 2,
            message: said,
            choice: { kind: "cloudflared", name: null, command: null },
          },
        },
      }),
    );
    const { panel } = await openReach();
    expect(within(panel).getByTestId("reach-connector-url")).toHaveTextContent(
      "Waiting for the tunnel to announce its public address",
    );
    expect(within(panel).queryByRole("button", { name: "Copy" })).toBeNull();
    const line = within(panel).getByTestId("reach-tunnel");
    expect(line).toHaveTextContent("Sluice runs a Cloudflare quick tunnel: restarting, started again 2×.");
    expect(line).toHaveTextContent('Last said: ERR <img src=x onerror="alert(1)"> retrying⟨U+202E⟩');
    expect(line.querySelector("img")).toBeNull();
    expect(panel).not.toHaveTextContent("Your tunnel must forward");
  });

  it("with OpenAI's tunnel, shows how to pick it in ChatGPT, not a connector URL", async () => {
    const base = reachOn().setting!;
    m.reachState.mockResolvedValue(
      reachOn({
        setting: {
          ...base,
          publicUrl: "https://api.openai.com",
          connectorUrl: "https://api.openai.com/mcp",
          givenUrl: "https://api.openai.com",
          tunnel: {
            name: "OpenAI's Secure MCP Tunnel tunnel_abc",
            state: "failed",
            restarts: 0,
            message: "OpenAI refused the tunnel's API key (401 <b>Unauthorized</b>)",
            choice: { kind: "openai", name: "tunnel_abc", command: null },
          },
        },
      }),
    );
    const { user, panel } = await openReach();
    expect(within(panel).getByTestId("reach-status")).toHaveTextContent(
      "On. ChatGPT connectors using the tunnel may only read in my-app.",
    );
    const steps = within(panel).getByTestId("reach-openai-steps");
    expect(within(steps).getByTestId("reach-tunnel-id")).toHaveTextContent("tunnel_abc");
    expect(steps).toHaveTextContent(
      'In ChatGPT: Settings → Connectors → add a connector, choose this tunnel, and "No authentication".',
    );
    expect(steps).toHaveTextContent(
      "The tunnel's key is the authentication: only connectors of your OpenAI organisation that may use the tunnel reach it.",
    );
    await user.click(within(steps).getByRole("button", { name: "Copy" }));
    expect(m.copy).toHaveBeenCalledWith("tunnel_abc", false);
    expect(steps).toHaveTextContent("Copied.");
    // Neither OpenAI's address nor the steps for a connector URL are offered.
    expect(within(panel).queryByTestId("reach-connector-url")).toBeNull();
    expect(within(panel).queryByTestId("reach-steps")).toBeNull();
    expect(panel).not.toHaveTextContent("api.openai.com");
    expect(panel).not.toHaveTextContent("Your tunnel must forward");
    const line = within(panel).getByTestId("reach-tunnel");
    expect(line).toHaveTextContent("Sluice runs OpenAI's Secure MCP Tunnel tunnel_abc: failed.");
    expect(line).toHaveTextContent("Last said: OpenAI refused the tunnel's API key (401 <b>Unauthorized</b>)");
    expect(line.querySelector("b")).toBeNull();
  });

  it("shows a request's code, name and host as text, inert for a moment, then decides it", async () => {
    const name = 'Evil\u202E<img src=x onerror="alert(1)"> Claude';
    m.reachState.mockResolvedValue(
      reachOn({ requests: [connectionRequest({ clientName: name, redirectHost: "claude.ai" })] }),
    );
    m.reachDecide.mockResolvedValue(reachOn());
    const { user, panel } = await openReach();
    const card = within(panel).getByTestId("reach-request");
    expect(within(card).getByTestId("reach-code")).toHaveTextContent("Code ABCD-EFGH");
    expect(card).toHaveTextContent('“Evil⟨U+202E⟩<img src=x onerror="alert(1)"> Claude” (unverified name) asks to connect');
    expect(card.textContent).not.toMatch(/\u202E/);
    expect(card.querySelector("img")).toBeNull();
    expect(card).toHaveTextContent("Returns to claude.ai");
    expect(card).toHaveTextContent("Approve only if the page in your browser shows this code.");

    // Right after it appears, a click does nothing.
    const approve = within(card).getByRole("button", { name: "Approve…" });
    expect(approve).toHaveAttribute("aria-disabled", "true");
    fireEvent.click(approve);
    expect(m.reachDecide).not.toHaveBeenCalled();
    arm();
    expect(card).toHaveAttribute("data-armed", "true");
    await user.click(approve);
    expect(m.reachDecide).toHaveBeenCalledWith("slrq_aaaaaaaaaaaaaaaa", true);
    expect(m.reachState).toHaveBeenCalledTimes(2);
  });

  it("shows a client verified only by its metadata document's host, and a borrowed name as unverified", async () => {
    m.reachState.mockResolvedValue(
      reachOn({
        requests: [
          connectionRequest({ id: "slrq_verified", clientName: "Claude", verifiedHost: "claude.ai" }),
          connectionRequest({ id: "slrq_claimed", clientName: "Claude (claude.ai)", verifiedHost: null }),
        ],
      }),
    );
    const { panel } = await openReach();
    const [verified, claimed] = within(panel).getAllByTestId("reach-request");
    expect(verified).toHaveTextContent("Claude (verified: claude.ai) asks to connect");
    expect(verified).not.toHaveTextContent("unverified");
    expect(verified).toHaveAttribute("aria-label", "Connection request from Claude (verified: claude.ai)");
    expect(claimed).toHaveTextContent("“Claude (claude.ai)” (unverified name) asks to connect");
    expect(claimed).toHaveTextContent("anyone can register any name");
    expect(within(claimed).getByTestId("reach-identity")).not.toHaveTextContent("verified:");
  });

  it("denies with Deny or Esc, and shows a refusal", async () => {
    m.reachState.mockResolvedValue(reachOn({ requests: [connectionRequest()] }));
    m.reachDecide.mockRejectedValueOnce(
      new ApiError({ code: "conflict", message: "this connection request was already denied" }),
    );
    const { user, panel } = await openReach();
    arm();
    const card = within(panel).getByTestId("reach-request");
    await user.click(within(card).getByRole("button", { name: "Deny" }));
    expect(m.reachDecide).toHaveBeenLastCalledWith("slrq_aaaaaaaaaaaaaaaa", false);
    expect(await within(card).findByRole("alert")).toHaveTextContent("already denied");
    m.reachDecide.mockResolvedValue(reachOn());
    fireEvent.keyDown(card, { key: "Escape" });
    expect(m.reachDecide).toHaveBeenCalledTimes(2);
    expect(m.reachDecide).toHaveBeenLastCalledWith("slrq_aaaaaaaaaaaaaaaa", false);
  });

  it("offers no decision on a request changed outside Sluice, and drops expired ones", async () => {
    m.reachState.mockResolvedValue(
      reachOn({
        requests: [
          connectionRequest({ tampered: true }),
          connectionRequest({ id: "slrq_old", code: "OLDX-CODE", expiresMs: Date.now() - 1 }),
        ],
      }),
    );
    const { panel } = await openReach();
    const cards = within(panel).getAllByTestId("reach-request");
    expect(cards).toHaveLength(1);
    expect(cards[0]).toHaveTextContent("Changed outside Sluice: it cannot be approved");
    expect(within(cards[0]).queryByRole("button")).toBeNull();
    expect(panel).not.toHaveTextContent("OLDX-CODE");
  });

  it("shows a new request when the engine says access changed", async () => {
    m.reachState.mockResolvedValue(reachOn());
    const { panel } = await openReach();
    expect(within(panel).queryByTestId("reach-request")).toBeNull();
    m.reachState.mockResolvedValue(reachOn({ requests: [connectionRequest({ code: "WXYZ-2345" })] }));
    await act(async () => emit({ kind: "accessChanged", paused: false }));
    expect(await within(panel).findByTestId("reach-code")).toHaveTextContent("WXYZ-2345");
  });

  it("turns off after an in-place confirmation and says how many tokens it revoked", async () => {
    m.reachState.mockResolvedValue(reachOn({ remoteTokens: 1 }));
    m.reachOff.mockResolvedValue(1);
    const { user, panel } = await openReach();
    await user.click(within(panel).getByRole("button", { name: "Turn off…" }));
    expect(m.reachOff).not.toHaveBeenCalled();
    m.reachState.mockResolvedValue(reachOff());
    await user.click(within(panel).getByRole("button", { name: "Turn off" }));
    expect(m.reachOff).toHaveBeenCalledTimes(1);
    expect(await within(panel).findByRole("status")).toHaveTextContent(
      "Reach from the web is off; 1 remote token revoked.",
    );
    expect(within(panel).getByTestId("reach-status")).toHaveTextContent("Off.");
  });
});

describe("remote tokens", () => {
  it("are marked remote in Tokens; the user's own are not", async () => {
    m.listTokens.mockResolvedValue([
      token(),
      token({ id: "tok_remote", label: "remote: Claude abcdef", remote: true }),
    ]);
    const user = setup();
    render(<App />);
    await screen.findByTestId("state-pill");
    await user.click(screen.getByRole("button", { name: "Tokens" }));
    const rows = await screen.findAllByTestId("token-row");
    expect(within(rows[0]).queryByTestId("token-remote")).toBeNull();
    expect(within(rows[1]).getByTestId("token-remote")).toHaveTextContent("remote");
  });
});

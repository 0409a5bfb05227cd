// The reach form in Settings: the tunnel choice and the fields each takes, what is sent, and the
// form filled in with the setting for Change…, with IPC mocked at the api.ts boundary only.
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ReachSettingDto } from "../bindings/ipc";
import { project, reachOn, token } from "../test/fixtures";

vi.mock("../api", () => import("../test/api"));

import { App } from "../App";
import { ApiError, m, resetApi } from "../test/api";

const A = "proj_aaaaaaaaaaaaaaaa";
const B = "proj_bbbbbbbbbbbbbbbb";

beforeEach(() => {
  vi.useFakeTimers({ shouldAdvanceTime: true });
  resetApi();
  m.listProjects.mockResolvedValue([project(), project({ id: B, name: "other", root: "/home/me/code/other" })]);
  m.listTokens.mockResolvedValue([token()]);
});

afterEach(() => {
  vi.useRealTimers();
});

/** The window on Settings with reach off, the turn-on form open. */
async function openForm() {
  const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
  render(<App />);
  await screen.findByTestId("state-pill");
  await user.click(screen.getByRole("button", { name: "Settings" }));
  const panel = await screen.findByTestId("reach");
  await user.click(within(panel).getByRole("button", { name: "Turn on…" }));
  const form = within(panel).getByRole("form", { name: "Turn on reach from the web" });
  const pick = (label: RegExp) => user.click(within(form).getByRole("radio", { name: label }));
  const submit = () => user.click(within(form).getByRole("button", { name: "Turn on" }));
  return { user, panel, form, f: within(form), pick, submit };
}

describe("the tunnel choice", () => {
  it("starts on the user's own tunnel, and shows only the fields each choice takes", async () => {
    const { f, pick } = await openForm();
    expect(f.getByRole("group", { name: "Tunnel" })).toBeInTheDocument();
    expect(f.getByRole("radio", { name: /^A tunnel I run myself/ })).toBeChecked();
    const fields = () => ({
      url: f.queryByRole("textbox", { name: /Public URL/ }) !== null,
      name: f.queryByRole("textbox", { name: /Tunnel name/ }) !== null,
      command: f.queryByRole("textbox", { name: /^Command/ }) !== null,
    });
    expect(fields()).toEqual({ url: true, name: false, command: false });
    expect(f.getByRole("textbox", { name: /Public URL/ }).closest("label")).toHaveTextContent("your tunnel's https address");

    await pick(/^Cloudflare quick tunnel \(address changes every run\)/);
    expect(fields()).toEqual({ url: false, name: false, command: false });
    expect(f.getByTestId("reach-quick-note")).toHaveTextContent(
      "A quick tunnel gets a new hostname every time it starts",
    );
    expect(f.getByTestId("reach-quick-note")).toHaveTextContent("connectors added with the old address stop working");

    await pick(/^Cloudflare named tunnel/);
    expect(fields()).toEqual({ url: true, name: true, command: false });
    expect(f.queryByTestId("reach-quick-note")).toBeNull();
    await pick(/^Tailscale Funnel/);
    expect(fields()).toEqual({ url: false, name: false, command: false });
    await pick(/^ngrok/);
    expect(fields()).toEqual({ url: true, name: false, command: false });
    expect(f.getByRole("textbox", { name: /Public URL/ }).closest("label")).toHaveTextContent("optional");
    await pick(/^My own command/);
    expect(fields()).toEqual({ url: true, name: false, command: true });
    expect(f.getByRole("textbox", { name: /^Command/ })).toHaveAccessibleDescription(
      /\{port\} is replaced by the tunnel port.*no shell runs it/,
    );
  });

  it("takes OpenAI's tunnel by its ID and API key, with no URL and no port", async () => {
    const { f, pick } = await openForm();
    expect(f.getByRole("textbox", { name: /Tunnel port/ })).toBeInTheDocument();
    await pick(/^OpenAI Secure MCP Tunnel/);
    expect(f.queryByRole("textbox", { name: /Public URL/ })).toBeNull();
    expect(f.queryByRole("textbox", { name: /Tunnel port/ })).toBeNull();
    expect(f.queryByRole("textbox", { name: /Tunnel name/ })).toBeNull();
    expect(f.queryByRole("textbox", { name: /^Command/ })).toBeNull();
    expect(f.getByRole("textbox", { name: /^Tunnel ID/ })).toHaveValue("");
    const key = f.getByLabelText(/^API key/);
    expect(key).toHaveAttribute("type", "password");
    expect(key).toHaveAttribute("autocomplete", "off");
    expect(key).toHaveValue("");
    expect(key).toHaveAccessibleDescription(/platform\.openai\.com → Settings → API keys/);
    // Turning on, there is no saved key to keep.
    expect(key).not.toHaveAccessibleDescription(/Leave it empty/);
  });

  it("sends OpenAI's tunnel with its ID and the key typed, and asks for both first", async () => {
    const { user, f, pick, submit } = await openForm();
    await user.type(f.getByRole("textbox", { name: /Public URL/ }), "https://left.example");
    await pick(/^OpenAI Secure MCP Tunnel/);
    await user.click(f.getByRole("checkbox", { name: "my-app" }));
    await submit();
    expect(f.getByRole("alert")).toHaveTextContent("Give the tunnel's ID (tunnel_…).");
    await user.type(f.getByRole("textbox", { name: /^Tunnel ID/ }), "tunnel abc");
    await submit();
    expect(f.getByRole("alert")).toHaveTextContent("A tunnel ID is 1–128 letters, digits, _ or -");
    await user.clear(f.getByRole("textbox", { name: /^Tunnel ID/ }));
    await user.type(f.getByRole("textbox", { name: /^Tunnel ID/ }), " tunnel_abc ");
    await submit();
    expect(f.getByRole("alert")).toHaveTextContent("Give the tunnel's API key");
    expect(m.reachOn).not.toHaveBeenCalled();

    await user.type(f.getByLabelText(/^API key/), "sk-test-123");
    m.reachOn.mockResolvedValue(reachOn());
    await submit();
    expect(m.reachOn).toHaveBeenCalledWith({
      url: null,
      tunnel: { kind: "openai", name: "tunnel_abc", command: null },
      apiKey: "sk-test-123",
      projects: [A],
      write: false,
      port: null,
      redirects: null,
    });
  });

  it("sends no API key with any other tunnel", async () => {
    const { user, f, pick, submit } = await openForm();
    await pick(/^OpenAI Secure MCP Tunnel/);
    await user.type(f.getByLabelText(/^API key/), "sk-typed-then-left");
    await pick(/^Tailscale Funnel/);
    expect(f.queryByLabelText(/^API key/)).toBeNull();
    await user.click(f.getByRole("checkbox", { name: "my-app" }));
    m.reachOn.mockResolvedValue(reachOn());
    await submit();
    expect(m.reachOn).toHaveBeenCalledTimes(1);
    expect(m.reachOn.mock.calls[0][0]).not.toHaveProperty("apiKey");
    expect(m.reachOn.mock.calls[0][0]).toMatchObject({ tunnel: { kind: "tailscale" }, port: 7879 });
  });

  it("sends a quick tunnel without the URL typed before, for Sluice to run", async () => {
    const { user, f, pick, submit } = await openForm();
    await user.type(f.getByRole("textbox", { name: /Public URL/ }), "https://left.example");
    await pick(/^Cloudflare quick tunnel/);
    await user.click(f.getByRole("checkbox", { name: "my-app" }));
    m.reachOn.mockResolvedValue(reachOn());
    await submit();
    expect(m.reachOn).toHaveBeenCalledWith({
      url: null,
      tunnel: { kind: "cloudflared", name: null, command: null },
      projects: [A],
      write: false,
      port: 7879,
      redirects: null,
    });
  });

  it("requires a named tunnel's name and URL, and a command, before Sluice is asked", async () => {
    const { user, f, pick, submit } = await openForm();
    await user.click(f.getByRole("checkbox", { name: "other" }));
    await pick(/^Cloudflare named tunnel/);
    await submit();
    expect(f.getByRole("alert")).toHaveTextContent("Give the public URL");
    await user.type(f.getByRole("textbox", { name: /Public URL/ }), "https://home.example");
    await submit();
    expect(f.getByRole("alert")).toHaveTextContent("Give the named tunnel's name.");
    await pick(/^My own command/);
    await submit();
    expect(f.getByRole("alert")).toHaveTextContent("Give the command that runs your tunnel.");
    expect(m.reachOn).not.toHaveBeenCalled();

    await pick(/^Cloudflare named tunnel/);
    await user.type(f.getByRole("textbox", { name: /Tunnel name/ }), " home ");
    m.reachOn.mockResolvedValue(reachOn());
    await submit();
    expect(m.reachOn).toHaveBeenLastCalledWith(
      expect.objectContaining({
        url: "https://home.example",
        tunnel: { kind: "cloudflared-named", name: "home", command: null },
        projects: [B],
      }),
    );
  });

  it("sends a command as typed, with an optional URL, and shows a refusal as text", async () => {
    const { user, f, pick, submit } = await openForm();
    await pick(/^My own command/);
    await user.click(f.getByRole("checkbox", { name: "my-app" }));
    // userEvent reads { as a key descriptor: {{ types one.
    await user.type(f.getByRole("textbox", { name: /^Command/ }), "edge --to 'http://127.0.0.1:{{port}'");
    const said = 'the tunnel program: `<img src=x onerror="alert(1)">` was not found\u202E';
    m.reachOn.mockRejectedValue(new ApiError({ code: "not_found", message: said }));
    await submit();
    expect(m.reachOn).toHaveBeenCalledWith(
      expect.objectContaining({
        url: null,
        tunnel: { kind: "command", name: null, command: "edge --to 'http://127.0.0.1:{port}'" },
      }),
    );
    const alert = f.getByRole("alert");
    expect(alert).toHaveTextContent('`<img src=x onerror="alert(1)">` was not found');
    expect(alert.querySelector("img")).toBeNull();

    await user.type(f.getByRole("textbox", { name: /Public URL/ }), "http://plain.example");
    await submit();
    expect(f.getByRole("alert")).toHaveTextContent("must start with https://");
    expect(m.reachOn).toHaveBeenCalledTimes(1);
  });
});

describe("Change… while on", () => {
  const running = (over: Partial<ReachSettingDto>) => reachOn({ setting: { ...reachOn().setting!, ...over } });

  /** The window on Settings with `state`, the Change form open. */
  async function openChange(state: ReturnType<typeof reachOn>) {
    m.reachState.mockResolvedValue(state);
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
    render(<App />);
    await screen.findByTestId("state-pill");
    await user.click(screen.getByRole("button", { name: "Settings" }));
    const panel = await screen.findByTestId("reach");
    expect(within(panel).queryByRole("form")).toBeNull();
    await user.click(within(panel).getByRole("button", { name: "Change…" }));
    const form = within(panel).getByRole("form", { name: "Change reach from the web" });
    expect(within(panel).queryByRole("button", { name: "Change…" })).toBeNull();
    return { user, panel, f: within(form) };
  }

  it("fills in the tunnel Sluice runs, the projects, writes and port, and keeps redirect URIs", async () => {
    const { user, panel, f } = await openChange(
      running({
        publicUrl: null,
        connectorUrl: null,
        givenUrl: null,
        port: 9000,
        write: true,
        redirects: ["https://hosted.example/cb"],
        projects: [
          { id: A, name: "my-app" },
          { id: "proj_gone", name: null },
        ],
        tunnel: {
          name: "`edge --to {port}`",
          state: "running",
          restarts: 0,
          message: "<b>up</b> at https://x.example\u202E",
          choice: { kind: "command", name: null, command: "edge --to '{port}'" },
        },
      }),
    );
    expect(f.getByRole("radio", { name: /^My own command/ })).toBeChecked();
    expect(f.getByRole("textbox", { name: /^Command/ })).toHaveValue("edge --to '{port}'");
    expect(f.getByRole("textbox", { name: /Public URL/ })).toHaveValue("");
    expect(f.getByRole("checkbox", { name: "my-app" })).toBeChecked();
    expect(f.getByRole("checkbox", { name: "other" })).not.toBeChecked();
    expect(f.getByRole("radio", { name: /Read and write/ })).toBeChecked();
    expect(f.getByRole("textbox", { name: /Tunnel port/ })).toHaveValue("9000");
    // What the tunnel printed stays text beside the form.
    const line = within(panel).getByTestId("reach-tunnel");
    expect(line).toHaveTextContent("Last said: <b>up</b> at https://x.example⟨U+202E⟩");
    expect(line.querySelector("b")).toBeNull();

    await user.click(f.getByRole("checkbox", { name: "other" }));
    m.reachOn.mockResolvedValue(running({ projects: [{ id: A, name: "my-app" }, { id: B, name: "other" }] }));
    m.reachState.mockResolvedValue(running({ projects: [{ id: A, name: "my-app" }, { id: B, name: "other" }] }));
    await user.click(f.getByRole("button", { name: "Change" }));
    expect(m.reachOn).toHaveBeenCalledWith({
      url: null,
      tunnel: { kind: "command", name: null, command: "edge --to '{port}'" },
      projects: [A, B],
      write: true,
      port: 9000,
      redirects: ["https://hosted.example/cb"],
    });
    expect(await within(panel).findByRole("button", { name: "Change…" })).toBeInTheDocument();
    expect(within(panel).getByTestId("reach-status")).toHaveTextContent("in my-app, other");
  });

  it("fills in the URL of the user's own tunnel; a no in the native dialog keeps reach as it was", async () => {
    const { user, panel, f } = await openChange(reachOn());
    expect(f.getByRole("radio", { name: /^A tunnel I run myself/ })).toBeChecked();
    expect(f.getByRole("textbox", { name: /Public URL/ })).toHaveValue("https://sluice.example.com");
    m.reachOn.mockRejectedValue(new ApiError({ code: "denied", message: 'nothing changed: you chose "Keep as is"' }));
    await user.click(f.getByRole("radio", { name: /^Tailscale Funnel/ }));
    await user.click(f.getByRole("button", { name: "Change" }));
    expect(m.reachOn).toHaveBeenCalledWith(
      expect.objectContaining({ url: null, tunnel: { kind: "tailscale", name: null, command: null }, projects: [A] }),
    );
    expect(f.getByRole("alert")).toHaveTextContent("nothing changed");
    expect(within(panel).getByTestId("reach-status")).toHaveTextContent("On.");
    await user.click(f.getByRole("button", { name: "Cancel" }));
    expect(within(panel).queryByRole("form")).toBeNull();
    expect(m.reachOn).toHaveBeenCalledTimes(1);
  });

  it("asks for a command again when Sluice withheld it", async () => {
    const withheld = { kind: "command" as const, name: null, command: null };
    const tunnel = { name: "`edge⟨U+202E⟩`", state: null, restarts: 0, message: null, choice: withheld };
    const { f } = await openChange(running({ tunnel }));
    expect(f.getByRole("textbox", { name: /^Command/ })).toHaveValue("");
    expect(f.getByRole("textbox", { name: /^Command/ })).toHaveAccessibleDescription(/Type it again/);
  });

  describe("with OpenAI's tunnel", () => {
    const openai = () =>
      running({
        publicUrl: "https://api.openai.com",
        connectorUrl: "https://api.openai.com/mcp",
        givenUrl: "https://api.openai.com",
        tunnel: {
          name: "OpenAI's Secure MCP Tunnel tunnel_abc",
          state: "running",
          restarts: 0,
          message: "connected to OpenAI",
          choice: { kind: "openai", name: "tunnel_abc", command: null },
        },
      });

    it("fills in the tunnel ID, never the key, and an empty key keeps the saved one", async () => {
      const { user, f } = await openChange(openai());
      expect(f.getByRole("radio", { name: /^OpenAI Secure MCP Tunnel/ })).toBeChecked();
      expect(f.getByRole("textbox", { name: /^Tunnel ID/ })).toHaveValue("tunnel_abc");
      const key = f.getByLabelText(/^API key/);
      expect(key).toHaveValue("");
      expect(key).toHaveAttribute("type", "password");
      expect(key).toHaveAccessibleDescription(/Leave it empty to keep the key Sluice saved for tunnel_abc\./);
      expect(f.queryByRole("textbox", { name: /Tunnel port/ })).toBeNull();

      await user.click(f.getByRole("checkbox", { name: "other" }));
      m.reachOn.mockResolvedValue(openai());
      await user.click(f.getByRole("button", { name: "Change" }));
      expect(m.reachOn).toHaveBeenCalledWith({
        url: null,
        tunnel: { kind: "openai", name: "tunnel_abc", command: null },
        projects: [A, B],
        write: false,
        port: null,
        redirects: [],
      });
      expect(m.reachOn.mock.calls[0][0]).not.toHaveProperty("apiKey");
    });

    it("asks for a key for another tunnel ID, and sends a new key when typed", async () => {
      const { user, f } = await openChange(openai());
      const id = f.getByRole("textbox", { name: /^Tunnel ID/ });
      await user.clear(id);
      await user.type(id, "tunnel_new");
      await user.click(f.getByRole("button", { name: "Change" }));
      expect(f.getByRole("alert")).toHaveTextContent("Give the tunnel's API key");
      expect(m.reachOn).not.toHaveBeenCalled();

      await user.type(f.getByLabelText(/^API key/), "sk-new");
      m.reachOn.mockRejectedValue(new ApiError({ code: "denied", message: 'nothing changed: you chose "Keep as is"' }));
      await user.click(f.getByRole("button", { name: "Change" }));
      expect(m.reachOn).toHaveBeenCalledWith(
        expect.objectContaining({
          url: null,
          tunnel: { kind: "openai", name: "tunnel_new", command: null },
          apiKey: "sk-new",
        }),
      );
    });

    it("does not fill in OpenAI's address as the URL of another tunnel", async () => {
      const { user, f } = await openChange(openai());
      await user.click(f.getByRole("radio", { name: /^A tunnel I run myself/ }));
      expect(f.getByRole("textbox", { name: /Public URL/ })).toHaveValue("");
      expect(f.getByRole("textbox", { name: /Tunnel port/ })).toHaveValue("7879");
      await user.click(f.getByRole("radio", { name: /^Cloudflare named tunnel/ }));
      expect(f.getByRole("textbox", { name: /Tunnel name/ })).toHaveValue("");
    });
  });

  it("fills in a named tunnel's name and hostname", async () => {
    const choice = { kind: "cloudflared-named" as const, name: "home", command: null };
    const tunnel = { name: "the Cloudflare tunnel home", state: "running", restarts: 0, message: null, choice };
    const { f } = await openChange(running({ tunnel }));
    expect(f.getByRole("radio", { name: /^Cloudflare named tunnel/ })).toBeChecked();
    expect(f.getByRole("textbox", { name: /Tunnel name/ })).toHaveValue("home");
    expect(f.getByRole("textbox", { name: /Public URL/ })).toHaveValue("https://sluice.example.com");
  });
});

// The Tokens view's profiles: shown and changed per token, chosen when creating one, with IPC
// mocked at the api.ts boundary only.
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { created, token } from "../test/fixtures";

vi.mock("../api", () => import("../test/api"));

import { ApiError, m, resetApi } from "../test/api";
import { TokensView } from "./Tokens";

beforeEach(() => {
  resetApi();
});

function view(tokens = [token()], formOpen = false) {
  const reload = vi.fn().mockResolvedValue(undefined);
  render(
    <TokensView tokens={tokens} projects={[]} formOpen={formOpen} setFormOpen={() => {}} reload={reload} />,
  );
  return reload;
}

describe("token profiles", () => {
  it("shows each token's profile and changes it through the api, then reloads", async () => {
    const user = userEvent.setup();
    m.setTokenProfile.mockResolvedValue(token({ profile: "review" }));
    const reload = view([token({ profile: "agent" })]);
    const select = screen.getByRole("combobox", { name: "Profile of Cursor" });
    expect(select).toHaveValue("agent");
    expect(within(select).getByRole("option", { name: /^review — list, read, search/ })).toBeInTheDocument();
    await user.selectOptions(select, "review");
    expect(m.setTokenProfile).toHaveBeenCalledWith("tok_aaaaaaaaaaaaaaaa", "review");
    expect(reload).toHaveBeenCalled();
  });

  it("shows a refusal (the user said no to a widening) and changes nothing", async () => {
    const user = userEvent.setup();
    m.setTokenProfile.mockRejectedValue(new ApiError({ code: "denied", message: 'nothing changed: you chose "Keep it as it is"' }));
    const reload = view([token({ profile: "review" })]);
    await user.selectOptions(screen.getByRole("combobox", { name: "Profile of Cursor" }), "full");
    expect(await screen.findByText(/Keep it as it is/)).toBeInTheDocument();
    expect(reload).not.toHaveBeenCalled();
  });

  it("shows revoked and remote tokens' profiles as text, not a control", () => {
    view([token({ id: "tok_r", label: "Old", revokedMs: 1 }), token({ id: "tok_h", label: "Hosted", remote: true })]);
    expect(screen.queryByRole("combobox", { name: /Profile of/ })).toBeNull();
    expect(screen.getAllByTestId("token-profile")).toHaveLength(2);
  });

  it("creates a token as review unless the form says otherwise", async () => {
    const user = userEvent.setup();
    m.createToken.mockResolvedValue(created());
    view([], true);
    const form = screen.getByRole("form", { name: "New token" });
    expect(within(form).getByRole("combobox", { name: "Profile" })).toHaveValue("review");
    await user.type(within(form).getByRole("textbox", { name: /Label/ }), "Claude Code");
    await user.selectOptions(within(form).getByRole("combobox", { name: "Profile" }), "agent");
    await user.click(within(form).getByRole("button", { name: "Create token" }));
    expect(m.createToken).toHaveBeenCalledWith({
      label: "Claude Code",
      scope: null,
      expiresInDays: null,
      profile: "agent",
    });
  });
});

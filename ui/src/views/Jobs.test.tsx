// The Jobs view and the emergency stop, with IPC mocked at the api.ts boundary only.
import { act, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { JobLogPage, JobLogsQuery } from "../bindings/ipc";
import { approval, job, project, state, token } from "../test/fixtures";

vi.mock("../api", () => import("../test/api"));

import { App } from "../App";
import { emit, m, resetApi } from "../test/api";
import { bound, duration } from "./Jobs";

/** A job's log as the engine keeps it: a growing string read by byte cursor. */
function fakeLog(initial: string, state: JobLogPage["state"] = "running") {
  const log = { text: initial, errors: "", state };
  m.jobLogs.mockImplementation(async (q: JobLogsQuery) => {
    const text = q.stream === "stdout" ? log.text : log.errors;
    const slice = text.slice(q.cursor, q.cursor + q.maxBytes);
    const next = q.cursor + slice.length;
    return { text: slice, cursor: q.cursor, nextCursor: next, droppedBytes: 0, atEnd: next >= text.length, state: log.state };
  });
  return log;
}

async function openJobs() {
  const user = userEvent.setup();
  render(<App />);
  await screen.findByTestId("state-pill");
  await user.keyboard("{Control>}4{/Control}");
  return user;
}

beforeEach(() => {
  resetApi();
  m.listProjects.mockResolvedValue([project({ access: "read-write", exec: "any" })]);
  m.listTokens.mockResolvedValue([token()]);
});

describe("the Jobs view", () => {
  it("explains how jobs appear when there are none", async () => {
    m.listProjects.mockResolvedValue([project()]);
    const user = await openJobs();
    expect(screen.getByText("No jobs")).toBeInTheDocument();
    expect(screen.getByTestId("jobs-hint")).toHaveTextContent("execution is off for every project");
    await user.click(screen.getByRole("button", { name: "Open Projects" }));
    expect(screen.getByRole("heading", { name: "Projects" })).toBeInTheDocument();
  });

  it("names the projects where commands may run", async () => {
    await openJobs();
    expect(await screen.findByTestId("jobs-hint")).toHaveTextContent("Commands may run in my-app");
  });

  it("lists jobs with state, command, project, duration, CPU and memory, as text", async () => {
    m.listJobs.mockResolvedValue([
      job({ command: "sh -c '<img src=x onerror=alert(1)>'" }),
      job({ id: "job_b", state: "failed", exitCode: 3, runtimeMs: 1_000, cpuPercent: null, memoryBytes: null }),
    ]);
    const { container } = render(<App />);
    const badge = await screen.findByTestId("jobs-badge");
    expect(badge).toHaveTextContent("1");
    await userEvent.setup().click(screen.getByRole("button", { name: /^Jobs/ }));
    const rows = await screen.findAllByTestId("job-row");
    expect(rows[0]).toHaveTextContent("Running");
    expect(rows[0]).toHaveTextContent("sh -c '<img src=x onerror=alert(1)>'");
    expect(rows[0]).toHaveTextContent("my-app");
    expect(rows[0]).toHaveTextContent("1:23");
    expect(rows[0]).toHaveTextContent("88%");
    expect(rows[0]).toHaveTextContent("350 MB");
    expect(rows[1]).toHaveTextContent("Failed (exit 3)");
    expect(container.querySelector("img")).toBeNull();
  });

  it("shows the live log, reads on when the job writes, and searches it", async () => {
    m.listJobs.mockResolvedValue([job()]);
    const log = fakeLog("compiling\ntest a ... ok\n");
    const user = await openJobs();
    await user.click(await screen.findByRole("button", { name: "cargo test --all" }));
    const view = await screen.findByTestId("job-log");
    await vi.waitFor(() => expect(view).toHaveTextContent("test a ... ok"));
    // The first read starts at 0 and asks for a bounded page.
    expect(m.jobLogs).toHaveBeenCalledWith({ id: job().id, stream: "stdout", cursor: 0, maxBytes: 65536 });

    log.text += "test b ... FAILED \u202Eevil\n";
    await act(async () => emit({ kind: "jobActivity", id: job().id }));
    await vi.waitFor(() => expect(view).toHaveTextContent("test b ... FAILED ⟨U+202E⟩evil"));
    // It continued from where it was, not from the start.
    expect(m.jobLogs).toHaveBeenLastCalledWith(expect.objectContaining({ cursor: "compiling\ntest a ... ok\n".length }));

    await user.type(screen.getByRole("searchbox", { name: "Search the log" }), "ok");
    expect(screen.getByTestId("log-matches")).toHaveTextContent("1 matching line");
    expect(view).toHaveTextContent("test a ... ok");
    expect(view).not.toHaveTextContent("compiling");
    await user.click(screen.getByRole("button", { name: "Copy" }));
    expect(m.copy).toHaveBeenCalledWith("test a ... ok", false);
    expect(screen.getByRole("checkbox", { name: "Follow" })).toBeChecked();
  });

  it("switches to the error stream from its start", async () => {
    m.listJobs.mockResolvedValue([job({ stderrBytes: 12 })]);
    const log = fakeLog("out line\n");
    log.errors = "warning: x\n";
    const user = await openJobs();
    await user.click(await screen.findByRole("button", { name: "cargo test --all" }));
    const view = await screen.findByTestId("job-log");
    await vi.waitFor(() => expect(view).toHaveTextContent("out line"));
    await user.click(screen.getByRole("button", { name: /^Errors/ }));
    await vi.waitFor(() => expect(view).toHaveTextContent("warning: x"));
    expect(view).not.toHaveTextContent("out line");
    expect(m.jobLogs).toHaveBeenCalledWith(expect.objectContaining({ stream: "stderr", cursor: 0 }));
  });

  it("stops reading once a finished job's log is complete", async () => {
    m.listJobs.mockResolvedValue([job({ state: "succeeded", exitCode: 0 })]);
    fakeLog("done\n", "succeeded");
    const user = await openJobs();
    await user.click(await screen.findByRole("button", { name: "cargo test --all" }));
    await vi.waitFor(() => expect(screen.getByTestId("job-log")).toHaveTextContent("done"));
    const calls = m.jobLogs.mock.calls.length;
    await act(async () => emit({ kind: "jobActivity", id: "" }));
    expect(m.jobLogs.mock.calls.length).toBe(calls);
    expect(screen.getByTestId("job-exit")).toHaveTextContent("Exit code 0");
    expect(screen.queryByRole("button", { name: "Cancel job…" })).toBeNull();
  });

  it("cancels only after confirmation", async () => {
    m.listJobs.mockResolvedValue([job()]);
    fakeLog("");
    m.cancelJob.mockResolvedValue(job({ state: "cancelled" }));
    const user = await openJobs();
    await user.click(await screen.findByRole("button", { name: "cargo test --all" }));
    const detail = screen.getByTestId("job-detail");
    await user.click(within(detail).getByRole("button", { name: "Cancel job…" }));
    expect(detail).toHaveTextContent("Its whole process tree is stopped");
    await user.click(within(detail).getByRole("button", { name: "Keep running" }));
    expect(m.cancelJob).not.toHaveBeenCalled();
    await user.click(within(detail).getByRole("button", { name: "Cancel job…" }));
    m.listJobs.mockResolvedValue([job({ state: "cancelled" })]);
    await user.click(within(detail).getByRole("button", { name: "Cancel job" }));
    expect(m.cancelJob).toHaveBeenCalledWith(job().id);
    expect(await within(screen.getByTestId("job-row")).findByText("Cancelled")).toBeInTheDocument();
  });

  it("shows the engine's refusal to cancel", async () => {
    m.listJobs.mockResolvedValue([job()]);
    fakeLog("");
    m.cancelJob.mockRejectedValue({ code: "conflict", message: "job already ended (succeeded)" });
    const user = await openJobs();
    await user.click(await screen.findByRole("button", { name: "cargo test --all" }));
    await user.click(screen.getByRole("button", { name: "Cancel job…" }));
    await user.click(screen.getByRole("button", { name: "Cancel job" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("already ended");
  });

  it("shows a job that appears while the view is open", async () => {
    await openJobs();
    expect(screen.getByText("No jobs")).toBeInTheDocument();
    m.listJobs.mockResolvedValue([job()]);
    await act(async () => emit({ kind: "jobChanged", id: job().id, state: "running" }));
    expect(await screen.findByTestId("job-row")).toHaveTextContent("Running");
  });
});

describe("the emergency stop", () => {
  it("stops at one click, says what it did, and asks before resuming", async () => {
    m.listApprovals.mockResolvedValue([approval()]);
    const user = userEvent.setup();
    render(<App />);
    await screen.findByTestId("state-pill");
    const button = screen.getByRole("button", { name: "Emergency stop" });
    expect(button).toHaveAttribute("title", expect.stringContaining("Kill every running job"));

    m.emergencyStop.mockResolvedValue({
      state: state({ paused: true, stopped: true }),
      killedJobs: 2,
      cancelledQueued: 0,
      deniedApprovals: 1,
    });
    await user.click(button);
    expect(m.emergencyStop).toHaveBeenCalledTimes(1);
    expect(screen.getByTestId("state-pill")).toHaveTextContent("Stopped");
    expect(screen.getByTestId("stopped-banner")).toHaveTextContent("2 jobs killed, 1 approval denied");
    expect(screen.queryByRole("button", { name: "Emergency stop" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Pause AI access" })).toBeNull();
    expect(m.listJobs).toHaveBeenCalledTimes(2);

    // Resuming asks too, then AI access is on again.
    m.setPaused.mockResolvedValue(state());
    await user.click(screen.getByRole("button", { name: "Resume AI access" }));
    await user.click(screen.getByRole("button", { name: "Stay stopped" }));
    expect(m.setPaused).not.toHaveBeenCalled();
    await user.click(screen.getByRole("button", { name: "Resume AI access" }));
    await user.click(screen.getByRole("button", { name: "Resume" }));
    expect(m.setPaused).toHaveBeenCalledWith(false);
    expect(screen.getByTestId("state-pill")).toHaveTextContent("AI access on");
    expect(screen.queryByTestId("stopped-banner")).toBeNull();
  });

  it("shows a stop made in the tray or the CLI", async () => {
    render(<App />);
    expect(await screen.findByTestId("state-pill")).toHaveTextContent("AI access on");
    m.appState.mockResolvedValue(state({ paused: true, stopped: true }));
    await act(async () => emit({ kind: "accessChanged", paused: true }));
    await vi.waitFor(() => expect(screen.getByTestId("state-pill")).toHaveTextContent("Stopped"));
    expect(screen.getByTestId("stopped-banner")).toHaveTextContent("every AI request is refused");
  });

  it("is described in Settings, with the confinement", async () => {
    m.appState.mockResolvedValue(state({ paused: true, stopped: true }));
    const user = userEvent.setup();
    render(<App />);
    await screen.findByTestId("state-pill");
    await user.keyboard("{Control>}6{/Control}");
    const s = screen.getByRole("region", { name: "Settings" });
    expect(s).toHaveTextContent("Stopped (emergency stop)");
    expect(screen.getByTestId("confinement")).toHaveTextContent("Landlock ABI 6");
  });
});

describe("start at login", () => {
  it("reads the login item and switches it", async () => {
    const user = userEvent.setup();
    render(<App />);
    await screen.findByTestId("state-pill");
    await user.keyboard("{Control>}6{/Control}");
    const box = await screen.findByRole("checkbox", { name: "Start Sluice when I log in" });
    await vi.waitFor(() => expect(box).toBeEnabled());
    expect(box).not.toBeChecked();
    m.startAtLogin.mockResolvedValue(true);
    await user.click(box);
    expect(m.setStartAtLogin).toHaveBeenCalledWith(true);
    await vi.waitFor(() => expect(box).toBeChecked());
  });

  it("shows why it cannot", async () => {
    m.startAtLogin.mockRejectedValue("no autostart folder");
    const user = userEvent.setup();
    render(<App />);
    await screen.findByTestId("state-pill");
    await user.keyboard("{Control>}6{/Control}");
    expect(await screen.findByRole("alert")).toHaveTextContent("no autostart folder");
  });
});

describe("helpers", () => {
  it("bounds the kept log at a line boundary and formats durations", () => {
    expect(bound("abc\ndef\nghi\n", 100)).toEqual({ text: "abc\ndef\nghi\n", cut: false });
    expect(bound("abc\ndef\nghi\n", 6)).toEqual({ text: "ghi\n", cut: true });
    expect(duration(83_000)).toBe("1:23");
    expect(duration(3_723_000)).toBe("1:02:03");
  });
});

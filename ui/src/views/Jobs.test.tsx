// The Jobs view and the emergency stop, with IPC mocked at the api.ts boundary only.
import { act, fireEvent, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { JobLogPage, JobLogsQuery } from "../bindings/ipc";
import { approval, job, project, state, token } from "../test/fixtures";

vi.mock("../api", () => import("../test/api"));

import { App } from "../App";
import { emit, m, resetApi } from "../test/api";
import { clockTime, exactTime } from "../format";
import { LOG_HEIGHT_PX, LOG_LINE_PX, LOG_OVERSCAN, bound } from "./JobLog";
import { SPARK_POINTS, duration, lastLines, recordSamples, type Samples } from "./Jobs";

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

  it("shows when each job started, in local time", async () => {
    const started = Date.now() - 1_000;
    m.listJobs.mockResolvedValue([
      job({ startedMs: started }),
      job({ id: "job_q", state: "queued", startedMs: null, runtimeMs: null, cpuPercent: null, memoryBytes: null }),
      job({ id: "job_o", state: "succeeded", exitCode: 0, startedMs: 1_700_000_000_000 }),
    ]);
    await openJobs();
    expect(screen.getByRole("columnheader", { name: "Started" })).toBeInTheDocument();
    const [running, queued, old] = (await screen.findAllByTestId("job-started")).map((c) => c.querySelector("time") ?? c);
    expect(running).toHaveTextContent(new Date(started).toLocaleTimeString());
    expect(running).toHaveAttribute("title", exactTime(started));
    expect(running).toHaveAttribute("datetime", new Date(started).toISOString());
    expect(queued).toHaveTextContent("waiting");
    // Another day: the date too.
    expect(old).toHaveTextContent(exactTime(1_700_000_000_000));
  });

  it("shows the live log, reads on when the job writes, and searches it", async () => {
    m.listJobs.mockResolvedValue([job()]);
    const log = fakeLog("compiling\ntest a ... ok\n");
    const user = await openJobs();
    await user.click(await screen.findByRole("button", { name: "cargo test --all" }));
    const view = await screen.findByTestId("job-log");
    await vi.waitFor(() => expect(view).toHaveTextContent("test a ... ok"));
    // One element per line, each ending in its newline: the element's text is the log's.
    expect(view.textContent).toBe("compiling\ntest a ... ok\n");
    // The first read starts at 0 and asks for a bounded page.
    expect(m.jobLogs).toHaveBeenCalledWith({ id: job().id, stream: "stdout", cursor: 0, maxBytes: 65536 });

    log.text += "test b ... FAILED \u202Eevil\n";
    await act(async () => emit({ kind: "jobActivity", id: job().id }));
    await vi.waitFor(() => expect(view).toHaveTextContent("test b ... FAILED ⟨U+202E⟩evil"));
    // It continued from where it was, not from the start.
    expect(m.jobLogs).toHaveBeenLastCalledWith(expect.objectContaining({ cursor: "compiling\ntest a ... ok\n".length }));

    // Search marks the matching line in place; the rest of the log stays.
    expect(screen.getByRole("checkbox", { name: "Follow" })).toBeChecked();
    await user.type(screen.getByRole("searchbox", { name: "Search the log" }), "OK");
    expect(screen.getByTestId("log-matches")).toHaveTextContent("1 of 1 matching line");
    const hit = view.querySelector(".log-line.current");
    expect(hit).toHaveTextContent("test a ... ok");
    expect(hit).toHaveAttribute("data-line", "2");
    expect(hit?.querySelector("mark")).toHaveTextContent(/^ok$/);
    expect(view).toHaveTextContent("compiling");
    // Reading a match stops following, or the next output would pull the view away.
    expect(screen.getByRole("checkbox", { name: "Follow" })).not.toBeChecked();
    // Copy takes the whole loaded log, as written, whatever the search.
    await user.click(screen.getByRole("button", { name: "Copy" }));
    expect(m.copy).toHaveBeenCalledWith(log.text, false);
    expect(within(screen.getByTestId("job-detail")).getByRole("status")).toHaveTextContent("Copied 3 lines.");
  });

  it("renders only the lines in view of a long log, follows its tail, searches and copies all of it", async () => {
    const N = 10_000;
    const all = Array.from({ length: N }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
    m.listJobs.mockResolvedValue([job({ stdoutBytes: all.length })]);
    const log = fakeLog(all);
    const user = await openJobs();
    await user.click(await screen.findByRole("button", { name: "cargo test --all" }));
    const view = await screen.findByTestId("job-log");
    const rendered = () => within(view).queryAllByTestId("log-line").map((l) => Number(l.dataset.line));
    const most = Math.ceil(LOG_HEIGHT_PX / LOG_LINE_PX) + 2 * LOG_OVERSCAN + 1;

    // Following: the last line is in the document, the first is not, and only a window's worth.
    await vi.waitFor(() => expect(rendered()).toContain(N));
    expect(rendered().length).toBeLessThanOrEqual(most);
    expect(rendered()).not.toContain(1);
    expect(screen.getByTestId("log-spacer")).toHaveStyle({ height: `${N * LOG_LINE_PX}px` });
    // The engine wrote more: the new line is followed into view.
    log.text += "the very end\n";
    await act(async () => emit({ kind: "jobActivity", id: job().id }));
    await vi.waitFor(() => expect(rendered()).toContain(N + 1));
    expect(view.querySelector(`[data-line="${N + 1}"]`)).toHaveTextContent("the very end");

    // Scrolling up to the start stops following and renders the start instead.
    const follow = screen.getByRole("checkbox", { name: "Follow" });
    expect(follow).toBeChecked();
    fireEvent.scroll(view, { target: { scrollTop: 0 } });
    expect(follow).not.toBeChecked();
    expect(rendered()).toContain(1);
    expect(rendered()).not.toContain(N);
    expect(rendered().length).toBeLessThanOrEqual(most);

    // A search finds a line far down and brings it into the document, marked.
    const search = screen.getByRole("searchbox", { name: "Search the log" });
    await user.type(search, "line 9000");
    expect(screen.getByTestId("log-matches")).toHaveTextContent("1 of 1 matching line");
    expect(rendered()).toContain(9000);
    expect(rendered()).not.toContain(1);
    expect(rendered().length).toBeLessThanOrEqual(most);
    const current = view.querySelector(".log-line.current");
    expect(current).toHaveAttribute("data-line", "9000");
    expect(current).toHaveAttribute("aria-current", "true");
    expect(current?.querySelector("mark")).toHaveTextContent("line 9000");

    // Enter and Shift+Enter step through the matches (line 5, 50…59, 500…599, 5000…5999),
    // and Previous wraps around from the first to the last.
    await user.clear(search);
    await user.type(search, "line 5");
    expect(screen.getByTestId("log-matches")).toHaveTextContent("1 of 1111 matching lines");
    expect(view.querySelector(".log-line.current")).toHaveAttribute("data-line", "5");
    await user.keyboard("{Enter}");
    expect(screen.getByTestId("log-matches")).toHaveTextContent("2 of 1111");
    expect(view.querySelector(".log-line.current")).toHaveAttribute("data-line", "50");
    await user.keyboard("{Shift>}{Enter}{/Shift}");
    expect(view.querySelector(".log-line.current")).toHaveAttribute("data-line", "5");
    await user.click(screen.getByRole("button", { name: "Previous match" }));
    expect(screen.getByTestId("log-matches")).toHaveTextContent("1111 of 1111");
    expect(view.querySelector(".log-line.current")).toHaveAttribute("data-line", "5999");
    expect(rendered()).not.toContain(N);
    await user.click(screen.getByRole("button", { name: "Next match" }));
    expect(view.querySelector(".log-line.current")).toHaveAttribute("data-line", "5");

    // Turning Follow back on returns to the tail.
    await user.click(follow);
    expect(rendered()).toContain(N + 1);

    // Copy: every loaded line, not the few in the document.
    await user.click(screen.getByRole("button", { name: "Copy" }));
    expect(m.copy).toHaveBeenCalledTimes(1);
    expect(m.copy).toHaveBeenCalledWith(log.text, false);
    expect(m.copy.mock.calls[0][0].split("\n")).toHaveLength(N + 2);
    expect(within(screen.getByTestId("job-detail")).getByRole("status")).toHaveTextContent(/^Copied 10.001 lines\.$/);
  });

  it("can be read from the keyboard: the log takes focus and scrolls", async () => {
    const all = Array.from({ length: 500 }, (_, i) => `row ${i + 1}`).join("\n") + "\n";
    m.listJobs.mockResolvedValue([job({ stdoutBytes: all.length })]);
    fakeLog(all);
    const user = await openJobs();
    await user.click(await screen.findByRole("button", { name: "cargo test --all" }));
    const view = await screen.findByRole("region", { name: "Log of cargo test --all" });
    await vi.waitFor(() => expect(view.querySelector('[data-line="500"]')).not.toBeNull());
    // Tab order: stream buttons, Follow, search, Copy, then the log itself.
    await user.click(screen.getByRole("button", { name: "Copy" }));
    await user.tab();
    expect(view).toHaveFocus();
    // A focused scroller scrolls natively (arrows, Page Up/Down); the window follows the scroll.
    fireEvent.scroll(view, { target: { scrollTop: 100 * LOG_LINE_PX } });
    expect(view.querySelector('[data-line="101"]')).not.toBeNull();
    expect(view.querySelector('[data-line="500"]')).toBeNull();
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
    // Only failures get the "how it ended" summary.
    expect(screen.queryByTestId("job-failure")).toBeNull();
  });

  it("shows a failed job's exit code and the last lines of each stream", async () => {
    const out = Array.from({ length: 1000 }, (_, i) => `out line ${i + 1}`).join("\n") + "\n";
    const errors = "warning: unused\nerror[E0425]: cannot find value `x`\nerror: could not compile `my-app`\n\n";
    const failed = job({
      state: "failed",
      exitCode: 101,
      stdoutBytes: out.length,
      stderrBytes: errors.length,
      cpuPercent: null,
      memoryBytes: null,
    });
    m.listJobs.mockResolvedValue([failed]);
    const log = fakeLog(out, "failed");
    log.errors = errors;
    const user = await openJobs();
    expect(await screen.findByTestId("job-row")).toHaveTextContent("Failed (exit 101)");
    await user.click(screen.getByRole("button", { name: "cargo test --all" }));
    expect(screen.getByTestId("job-exit")).toHaveTextContent("Exit code 101");
    const summary = screen.getByTestId("job-failure");
    expect(summary).toHaveTextContent("It failed with exit code 101");
    const stdout = await within(summary).findByTestId("job-tail-stdout");
    // The last ten lines, read from the end of the log (not the whole of it), first cut line dropped.
    expect(stdout.textContent).toBe(
      Array.from({ length: 10 }, (_, i) => `out line ${991 + i}`).join("\n"),
    );
    expect(m.jobLogs).toHaveBeenCalledWith({
      id: failed.id,
      stream: "stdout",
      cursor: out.length - 8192,
      maxBytes: 8192,
    });
    const stderr = within(summary).getByTestId("job-tail-stderr");
    expect(stderr.textContent).toBe(
      "warning: unused\nerror[E0425]: cannot find value `x`\nerror: could not compile `my-app`",
    );
    expect(summary).toHaveTextContent("its last lines:");
  });

  it("says how a job ended by a signal or with no output", async () => {
    m.listJobs.mockResolvedValue([
      job({ state: "failed", signal: 9, stdoutBytes: 0, cpuPercent: null, memoryBytes: null }),
    ]);
    fakeLog("", "failed");
    const user = await openJobs();
    await user.click(await screen.findByRole("button", { name: "cargo test --all" }));
    expect(screen.getByTestId("job-signal")).toHaveTextContent("Ended by signal 9");
    const summary = screen.getByTestId("job-failure");
    expect(summary).toHaveTextContent("It was ended by signal 9.");
    expect(await within(summary).findByText("It wrote no output.")).toBeInTheDocument();
  });

  it("draws CPU and memory as sparklines of the samples seen, naming the latest", async () => {
    const MB = 1024 * 1024;
    const sample = (runtimeMs: number, cpuPercent: number, mb: number) =>
      job({ runtimeMs, cpuPercent, memoryBytes: mb * MB });
    m.listJobs.mockResolvedValue([sample(1_000, 10, 100)]);
    await openJobs();
    const row = await screen.findByTestId("job-row");
    const cpu = () => within(row).getByRole("img", { name: /^CPU/ });
    const memory = () => within(row).getByRole("img", { name: /^Memory/ });
    const points = (svg: Element) => svg.querySelector("polyline")?.getAttribute("points")?.split(" ").length ?? 0;
    expect(cpu()).toHaveAccessibleName("CPU 10%");
    expect(memory()).toHaveAccessibleName("Memory 100 MB");

    const next = async (j: ReturnType<typeof job>) => {
      m.listJobs.mockResolvedValue([j]);
      await act(async () => emit({ kind: "jobActivity", id: j.id }));
    };
    await next(sample(2_000, 42, 120));
    await vi.waitFor(() => expect(cpu()).toHaveAccessibleName("CPU 42%"));
    expect(points(cpu())).toBe(2);
    expect(memory()).toHaveAccessibleName("Memory 120 MB");
    // The current values stay visible as text.
    expect(row).toHaveTextContent("42%");
    expect(row).toHaveTextContent("120 MB");

    // Output reloads the list within the same sample period: the newest point is replaced.
    await next(sample(2_300, 50, 120));
    await vi.waitFor(() => expect(cpu()).toHaveAccessibleName("CPU 50%"));
    expect(points(cpu())).toBe(2);

    // A new period adds a point; the label keeps the peak.
    await next(sample(3_000, 5, 90));
    await vi.waitFor(() => expect(cpu()).toHaveAccessibleName("CPU 5%, peak 50%"));
    expect(points(cpu())).toBe(3);
    expect(memory()).toHaveAccessibleName("Memory 90 MB, peak 120 MB");
    expect(row).toHaveTextContent("5%");

    // A finished job has no live figures.
    await next(job({ state: "succeeded", exitCode: 0, cpuPercent: null, memoryBytes: null }));
    await vi.waitFor(() => expect(within(row).queryByRole("img")).toBeNull());
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

  it("opens a published port through the engine, which builds the link", async () => {
    const server = job({
      command: "python3 -m http.server 8000",
      interactive: "pipe",
      ports: [{ port: 8000, url: "http://127.0.0.1:41234/" }],
    });
    m.listJobs.mockResolvedValue([server]);
    fakeLog("");
    m.openJobPort.mockResolvedValue(null);
    const user = await openJobs();
    await user.click(await screen.findByRole("button", { name: "python3 -m http.server 8000" }));
    const detail = screen.getByTestId("job-detail");
    expect(within(detail).getByTestId("job-interactive")).toHaveTextContent("can type into it");
    await user.click(within(detail).getByRole("button", { name: "http://127.0.0.1:41234/" }));
    expect(m.openJobPort).toHaveBeenCalledWith(server.id, 8000);
    m.openJobPort.mockRejectedValue({ code: "port_not_published", message: "no longer publishes" });
    await user.click(within(detail).getByRole("button", { name: "http://127.0.0.1:41234/" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("no longer publishes");
  });

  it("shows a terminal session live and read-only, with a caret while it runs", async () => {
    const repl = job({ command: "python3 -i", interactive: "terminal" });
    m.listJobs.mockResolvedValue([repl]);
    const log = fakeLog(">>> 6*7\n42\n>>> ");
    const user = await openJobs();
    await user.click(await screen.findByRole("button", { name: "python3 -i" }));
    const detail = screen.getByTestId("job-detail");
    // One stream, named as what it is; the text as the program showed it.
    const group = within(detail).getByRole("group", { name: "Stream" });
    expect(within(group).getAllByRole("button").map((b) => b.textContent)).toEqual([expect.stringMatching(/^Terminal/)]);
    const shown = await within(detail).findByTestId("job-log");
    await vi.waitFor(() => expect(shown).toHaveTextContent("42"));
    expect(within(detail).getByTestId("job-session")).toHaveTextContent("read-only here");
    // Nothing in the view types into the program.
    expect(within(detail).queryByRole("textbox", { name: /input|type|send/i })).toBeNull();
    // The caret sits after the prompt, outside the text a reader or a copy gets.
    const lines = within(shown).getAllByTestId("log-line");
    const last = lines[lines.length - 1];
    expect(last.textContent).toBe(">>> \n");
    expect(last.querySelector(".caret")).not.toBeNull();
    // Once it has ended: no caret, and the caption says so.
    log.state = "succeeded";
    m.listJobs.mockResolvedValue([{ ...repl, state: "succeeded", exitCode: 0 }]);
    await act(async () => emit({ kind: "jobChanged", id: repl.id, state: "succeeded" }));
    await vi.waitFor(() => expect(within(detail).getByTestId("job-session")).toHaveTextContent("has ended"));
    expect(shown.querySelector(".caret")).toBeNull();
  });

  it("keeps both streams for a job typed into through a pipe", async () => {
    m.listJobs.mockResolvedValue([job({ command: "sort", interactive: "pipe" })]);
    fakeLog("");
    const user = await openJobs();
    await user.click(await screen.findByRole("button", { name: "sort" }));
    const group = within(screen.getByTestId("job-detail")).getByRole("group", { name: "Stream" });
    expect(within(group).getAllByRole("button").map((b) => b.textContent?.split(" ")[0])).toEqual(["Output", "Errors"]);
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
    expect(screen.getByTestId("hidden-from-jobs")).toHaveTextContent("~/.ssh, ~/.aws");
  });

  it("says so when no credential store was found", async () => {
    m.appState.mockResolvedValue(state({ hiddenFromJobs: [] }));
    const user = userEvent.setup();
    render(<App />);
    await screen.findByTestId("state-pill");
    await user.keyboard("{Control>}6{/Control}");
    expect(screen.getByTestId("hidden-from-jobs")).toHaveTextContent("No credential store found");
  });

  it("lists the registries, adds and removes a host, and shows a refusal", async () => {
    const user = userEvent.setup();
    render(<App />);
    await screen.findByTestId("state-pill");
    await user.keyboard("{Control>}6{/Control}");
    const box = screen.getByTestId("registries");
    expect(box).toHaveTextContent("pypi.org — Python packages (index)");
    const mine = { host: "pypi.corp.example", serves: null };
    m.setRegistries.mockResolvedValueOnce([...state().registries, mine]);
    await user.type(within(box).getByRole("textbox", { name: "New registry host" }), " pypi.corp.example ");
    await user.click(within(box).getByRole("button", { name: "Add host" }));
    expect(m.setRegistries).toHaveBeenLastCalledWith(["index.crates.io", "pypi.org", "pypi.corp.example"]);
    expect(box).toHaveTextContent("pypi.corp.example");
    expect(within(box).getByRole("textbox", { name: "New registry host" })).toHaveValue("");
    m.setRegistries.mockRejectedValueOnce({ code: "invalid_argument", message: '"10.0.0.1" is not a host name' });
    await user.type(within(box).getByRole("textbox", { name: "New registry host" }), "10.0.0.1");
    await user.click(within(box).getByRole("button", { name: "Add host" }));
    expect(await within(box).findByRole("alert")).toHaveTextContent("is not a host name");
    expect(within(box).getByRole("textbox", { name: "New registry host" })).toHaveValue("10.0.0.1");
    m.setRegistries.mockResolvedValueOnce([mine]);
    await user.click(within(box).getByRole("button", { name: "Remove pypi.org" }));
    expect(m.setRegistries).toHaveBeenLastCalledWith(["index.crates.io", "pypi.corp.example"]);
    m.setRegistries.mockResolvedValueOnce(state().registries);
    await user.click(within(box).getByRole("button", { name: "Restore defaults" }));
    expect(m.setRegistries).toHaveBeenLastCalledWith(null);
  });

  it("says when the registries cannot be enforced here", async () => {
    m.appState.mockResolvedValue(state({ registriesAvailable: false }));
    const user = userEvent.setup();
    render(<App />);
    await screen.findByTestId("state-pill");
    await user.keyboard("{Control>}6{/Control}");
    expect(screen.getByTestId("registries")).toHaveTextContent("do not run here");
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

  it("takes the last lines of a log tail, dropping a cut first line and trailing blanks", () => {
    expect(lastLines("a\nb\nc\n\n", false, 2)).toEqual(["b", "c"]);
    expect(lastLines("t line\nb\n", true, 10)).toEqual(["b"]);
    expect(lastLines("only\n", true, 10)).toEqual(["only"]);
    expect(lastLines("", false, 10)).toEqual([]);
  });

  it("keeps a bounded sample history per running job", () => {
    let h: Map<string, Samples> = new Map();
    for (let i = 0; i < 100; i++) {
      h = recordSamples(h, [job({ runtimeMs: i * 1_000, cpuPercent: i, memoryBytes: i })], 0);
    }
    const s = h.get(job().id)!;
    expect(s.cpu).toHaveLength(SPARK_POINTS);
    expect(s.cpu[0]).toBe(100 - SPARK_POINTS);
    expect(s.cpu.at(-1)).toBe(99);
    expect(s.memory.at(-1)).toBe(99);
    // Jobs that no longer run, or are gone, are forgotten.
    expect(recordSamples(h, [job({ state: "cancelled" })], 0).size).toBe(0);
    expect(recordSamples(h, [], 0).size).toBe(0);
  });

  it("shows a clock time today and the date on other days", () => {
    const now = new Date(2026, 2, 14, 15, 0, 0).getTime();
    const today = new Date(2026, 2, 14, 9, 5, 7).getTime();
    const before = new Date(2026, 2, 13, 23, 59, 0).getTime();
    expect(clockTime(today, now)).toBe(new Date(today).toLocaleTimeString());
    expect(clockTime(before, now)).toBe(exactTime(before));
  });
});

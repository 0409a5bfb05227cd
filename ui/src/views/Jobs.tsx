// Jobs: the commands assistants run — running and recent, with state, duration, CPU and
// memory — and the selected job's live log (follow, search, copy) with Cancel. Log text is
// rendered as text, never HTML; the log kept in the window is bounded.

import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { api } from "../api";
import type { JobDto, JobStateDto, LogStream, ProjectDto } from "../bindings/ipc";
import { ConfirmButton, ErrorLine, Text, errorMessage, useNow } from "../components";
import { humanBytes, visible } from "../format";

/** Bytes per log request (the engine caps a page at 64 KiB). */
const PAGE_BYTES = 64 * 1024;
/** Pages read per refresh at most, so a flood of output cannot keep the window busy. */
const MAX_PAGES_PER_READ = 16;
/** Characters of log the window keeps; older output is dropped from the view. */
export const MAX_LOG_CHARS = 1_000_000;
/** CPU samples kept per job for the sparkline. */
const SPARK_POINTS = 30;

const STATE: Record<JobStateDto, string> = {
  queued: "Queued",
  running: "Running",
  succeeded: "Succeeded",
  failed: "Failed",
  cancelled: "Cancelled",
  "timed-out": "Timed out",
};

export const isFinal = (s: JobStateDto) => s !== "queued" && s !== "running";

/** "1:05" or "1:02:03". */
export function duration(ms: number): string {
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60));
  const ss = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${mm.padStart(2, "0")}:${ss}` : `${mm}:${ss}`;
}

function StateChip({ job }: { job: JobDto }) {
  const extra =
    job.state === "failed" && job.exitCode !== null ? ` (exit ${job.exitCode})` : "";
  return (
    <span className={`chip job-${job.state}`} data-testid="job-state">
      {STATE[job.state]}
      {extra}
    </span>
  );
}

function Sparkline({ points, label }: { points: number[]; label: string }) {
  if (points.length < 2) return null;
  const max = Math.max(100, ...points);
  const w = 60;
  const h = 16;
  const step = w / (SPARK_POINTS - 1);
  const start = w - step * (points.length - 1);
  // One pixel of margin: a line at 0% or 100% stays a visible line.
  const y = (p: number) => (1 + (h - 2) * (1 - p / max)).toFixed(1);
  const d = points.map((p, i) => `${(start + i * step).toFixed(1)},${y(p)}`);
  return (
    <svg className="spark" width={w} height={h} role="img" aria-label={label}>
      <polyline points={d.join(" ")} fill="none" stroke="currentColor" strokeWidth="1.5" />
    </svg>
  );
}

export function JobsView(props: {
  jobs: JobDto[];
  projects: ProjectDto[];
  /** Changes whenever a job event arrives: the open log reads on. */
  activity: number;
  reload: () => Promise<void>;
  openProjects: () => void;
}) {
  const [selected, setSelected] = useState<string | null>(null);
  const now = useNow(1000);
  const loadedAt = useMemo(() => Date.now(), [props.jobs]);
  const history = useRef(new Map<string, number[]>());
  useEffect(() => {
    for (const j of props.jobs) {
      if (j.state !== "running" || j.cpuPercent === null) continue;
      const h = history.current.get(j.id) ?? [];
      h.push(j.cpuPercent);
      if (h.length > SPARK_POINTS) h.shift();
      history.current.set(j.id, h);
    }
  }, [props.jobs]);
  const job = props.jobs.find((j) => j.id === selected) ?? null;
  const runtime = (j: JobDto) =>
    j.runtimeMs === null ? null : j.runtimeMs + (j.state === "running" ? Math.max(0, now - loadedAt) : 0);

  if (props.jobs.length === 0) return <NoJobs projects={props.projects} openProjects={props.openProjects} />;
  const running = props.jobs.filter((j) => j.state === "running").length;
  return (
    <section aria-label="Jobs">
      <div className="section-head">
        <h1>Jobs</h1>
        <span className="muted">
          {running} running · {props.jobs.length - running} recent
        </span>
      </div>
      <table className="list">
        <thead>
          <tr>
            <th>State</th>
            <th>Command</th>
            <th>Project</th>
            <th>Duration</th>
            <th>CPU</th>
            <th>Memory</th>
          </tr>
        </thead>
        <tbody>
          {props.jobs.map((j) => {
            const t = runtime(j);
            return (
              <tr key={j.id} aria-selected={j.id === selected} data-testid="job-row">
                <td>
                  <StateChip job={j} />
                </td>
                <td>
                  <button type="button" className="link mono" onClick={() => setSelected(j.id)}>
                    {visible(j.command)}
                  </button>
                </td>
                <td>{j.projectName ? <Text>{j.projectName}</Text> : <span className="muted">removed</span>}</td>
                <td>{t === null ? <span className="muted">—</span> : duration(t)}</td>
                <td>
                  {j.state === "running" && j.cpuPercent !== null ? (
                    <span className="metric">
                      <Sparkline points={history.current.get(j.id) ?? []} label={`CPU of ${j.command}`} />
                      {Math.round(j.cpuPercent)}%
                    </span>
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
                <td>
                  {j.state === "running" && j.memoryBytes !== null ? (
                    humanBytes(j.memoryBytes)
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {job && (
        <JobDetail key={job.id} job={job} activity={props.activity} reload={props.reload} />
      )}
    </section>
  );
}

function NoJobs(props: { projects: ProjectDto[]; openProjects: () => void }) {
  const can = props.projects.filter((p) => p.exec !== "off" && p.status === "available");
  return (
    <section className="empty" aria-label="Jobs">
      <h2>No jobs</h2>
      <p>
        When an assistant runs a command in a project — a build, the tests, a dev server — it is
        listed here while it runs and afterwards, with its live output, duration, CPU and memory,
        and a Cancel button.
      </p>
      {can.length === 0 ? (
        <p data-testid="jobs-hint">
          Nothing can run yet: execution is off for every project. To let an assistant run
          commands, open a project and choose an execution mode (Safe, Project or Any).
        </p>
      ) : (
        <p data-testid="jobs-hint">
          Commands may run in {can.map((p, i) => (
            <span key={p.id}>
              {i > 0 && ", "}
              <Text>{p.name}</Text>
            </span>
          ))}
          . None has run since Sluice started.
        </p>
      )}
      <button type="button" onClick={props.openProjects}>
        Open Projects
      </button>
    </section>
  );
}

function JobDetail(props: { job: JobDto; activity: number; reload: () => Promise<void> }) {
  const j = props.job;
  const [error, setError] = useState<string | null>(null);
  const cancel = async () => {
    try {
      await api.cancelJob(j.id);
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    }
    await props.reload();
  };
  return (
    <section className="card detail" aria-label="Job details" data-testid="job-detail">
      <div className="section-head">
        <h2>
          <Text mono>{j.command}</Text>
        </h2>
        {!isFinal(j.state) && (
          <ConfirmButton
            label="Cancel job…"
            question="Cancel this job? Its whole process tree is stopped."
            confirmLabel="Cancel job"
            keepLabel="Keep running"
            onConfirm={cancel}
            danger
          />
        )}
      </div>
      <p className="row">
        <StateChip job={j} />
        <span>
          in {j.projectName ? <Text>{j.projectName}</Text> : "a removed project"}
        </span>
        {j.exitCode !== null && <span data-testid="job-exit">Exit code {j.exitCode}</span>}
        {j.signal !== null && <span>Ended by signal {j.signal}</span>}
        <code className="mono muted" title="The id assistants see">
          {j.id}
        </code>
      </p>
      {j.error && (
        <p className="error">
          <Text>{j.error}</Text>
        </p>
      )}
      {j.confinement && (
        <p className="muted">
          <Text>{j.confinement}</Text>
        </p>
      )}
      <ErrorLine error={error} />
      <LogView job={j} activity={props.activity} />
    </section>
  );
}

/** Drops whole lines from the start until `text` fits in `max` characters. */
export function bound(text: string, max: number): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  let from = text.length - max;
  const nl = text.indexOf("\n", from);
  if (nl !== -1 && nl + 1 < text.length) from = nl + 1;
  return { text: text.slice(from), cut: true };
}

function LogView({ job, activity }: { job: JobDto; activity: number }) {
  const [stream, setStream] = useState<LogStream>("stdout");
  const [text, setText] = useState("");
  const [cut, setCut] = useState(false);
  const [dropped, setDropped] = useState(0);
  const [follow, setFollow] = useState(true);
  const [search, setSearch] = useState("");
  const [error, setError] = useState<string | null>(null);
  const cursor = useRef(0);
  const done = useRef(false);
  const reading = useRef<Promise<void> | null>(null);
  const again = useRef(false);
  const generation = useRef(0);
  const pre = useRef<HTMLPreElement>(null);

  const read = useCallback(async () => {
    if (reading.current) {
      again.current = true;
      return reading.current;
    }
    const gen = generation.current;
    const run = async () => {
      do {
        again.current = false;
        for (let i = 0; i < MAX_PAGES_PER_READ && !done.current; i++) {
          const page = await api.jobLogs({ id: job.id, stream, cursor: cursor.current, maxBytes: PAGE_BYTES });
          if (gen !== generation.current) return;
          cursor.current = page.nextCursor;
          if (page.droppedBytes > 0) setDropped((d) => d + page.droppedBytes);
          if (page.text) {
            setText((t) => {
              const b = bound(t + page.text, MAX_LOG_CHARS);
              if (b.cut) setCut(true);
              return b.text;
            });
          }
          if (page.atEnd) {
            if (isFinal(page.state)) done.current = true;
            break;
          }
        }
      } while (again.current && !done.current);
    };
    const p: Promise<void> = run()
      .then(() => setError(null))
      .catch((e) => setError(errorMessage(e)))
      .finally(() => {
        // A read of an earlier stream must not release the current one's.
        if (reading.current === p) reading.current = null;
      });
    reading.current = p;
    return p;
  }, [job.id, stream]);

  // A new stream starts from the beginning.
  useEffect(() => {
    generation.current += 1;
    reading.current = null;
    cursor.current = 0;
    done.current = false;
    setText("");
    setCut(false);
    setDropped(0);
    void read();
  }, [read]);

  // Job events (output, samples, the end) read on.
  useEffect(() => {
    if (!done.current) void read();
  }, [activity, job.state, read]);

  useEffect(() => {
    if (follow && pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  }, [text, follow, search]);

  const query = search.trim().toLowerCase();
  const lines = useMemo(() => text.split("\n"), [text]);
  const matches = useMemo(
    () => (query ? lines.filter((l) => l.toLowerCase().includes(query)) : null),
    [lines, query],
  );
  const shown = matches ? matches.join("\n") : text;
  const bytes = stream === "stdout" ? job.stdoutBytes : job.stderrBytes;

  return (
    <div className="log">
      <div className="row log-tools">
        <div className="segmented" role="group" aria-label="Stream">
          {(["stdout", "stderr"] as const).map((s) => (
            <button key={s} type="button" aria-pressed={stream === s} onClick={() => setStream(s)}>
              {s === "stdout" ? "Output" : "Errors"} ({humanBytes(s === "stdout" ? job.stdoutBytes : job.stderrBytes)})
            </button>
          ))}
        </div>
        <label>
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> Follow
        </label>
        <label>
          <span className="visually-hidden">Search the log</span>
          <input
            type="search"
            name="log-search"
            placeholder="Search the log"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
        </label>
        {matches && (
          <span className="muted" data-testid="log-matches">
            {matches.length} matching {matches.length === 1 ? "line" : "lines"}
          </span>
        )}
        <button type="button" onClick={() => void api.copy(shown, false)}>
          Copy
        </button>
      </div>
      {(cut || dropped > 0) && (
        <p className="muted">
          Older output is not shown ({dropped > 0 ? `${humanBytes(dropped)} dropped by Sluice's bounded log` : "the window keeps the newest part"}).
        </p>
      )}
      <ErrorLine error={error} />
      <pre className="log-text" ref={pre} data-testid="job-log" aria-label={`Log of ${job.command}`} tabIndex={0}>
        {shown ? visible(shown) : <span className="muted">{bytes === 0 ? "No output yet." : ""}</span>}
      </pre>
    </div>
  );
}

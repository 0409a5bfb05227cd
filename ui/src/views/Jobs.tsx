// Jobs: the commands assistants run — running and recent, with state, start, duration, and CPU
// and memory as sparklines of the samples seen while the view is open — and the selected job's
// live log (JobLog.tsx: virtualized, follow, search, copy) with Cancel; a failed job shows its
// exit code and last lines; a dev server's published ports are links that open in the browser
// (the engine builds the link from the job and the port). Log text is rendered as text, never
// HTML.

import { useEffect, useMemo, useState } from "react";
import { api } from "../api";
import type { JobDto, JobStateDto, LogStream, ProjectDto } from "../bindings/ipc";
import { ConfirmButton, ErrorLine, Text, errorMessage, useNow } from "../components";
import { clockTime, exactTime, humanBytes, visible } from "../format";
import { LogView, isFinal } from "./JobLog";

/** Samples kept per job for the sparklines: a minute at the engine's one sample a second. */
export const SPARK_POINTS = 60;
/**
 * The list is reloaded on every job event, output included, so one engine sample (every
 * second) is seen several times: a new point starts only after this much more runtime.
 */
const SAMPLE_SPACING_MS = 900;
/** What a failed job's summary shows: its last lines, from at most this much of each stream. */
export const TAIL_LINES = 10;
const TAIL_BYTES = 8 * 1024;

const STATE: Record<JobStateDto, string> = {
  queued: "Queued",
  running: "Running",
  succeeded: "Succeeded",
  failed: "Failed",
  cancelled: "Cancelled",
  "timed-out": "Timed out",
};

const isFailure = (s: JobStateDto) => s === "failed" || s === "timed-out";

/** "1:05" or "1:02:03". */
export function duration(ms: number): string {
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60));
  const ss = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${mm.padStart(2, "0")}:${ss}` : `${mm}:${ss}`;
}

/** One running job's recent samples, oldest first; `at` is the runtime of the newest point. */
export type Samples = { cpu: number[]; memory: number[]; at: number };

/**
 * The sparkline history after a reload of the list: a point per sample period of each running
 * job (a repeat within the period replaces the newest point, so it always shows the latest
 * sample), at most [`SPARK_POINTS`]; jobs no longer running are forgotten.
 */
export function recordSamples(
  prev: ReadonlyMap<string, Samples>,
  jobs: JobDto[],
  now: number,
): Map<string, Samples> {
  const next = new Map<string, Samples>();
  for (const j of jobs) {
    if (j.state !== "running" || j.cpuPercent === null || j.memoryBytes === null) continue;
    const old = prev.get(j.id);
    const at = j.runtimeMs ?? now;
    if (old && at - old.at < SAMPLE_SPACING_MS) {
      next.set(j.id, {
        cpu: [...old.cpu.slice(0, -1), j.cpuPercent],
        memory: [...old.memory.slice(0, -1), j.memoryBytes],
        at: old.at,
      });
    } else {
      next.set(j.id, {
        cpu: [...(old?.cpu ?? []), j.cpuPercent].slice(-SPARK_POINTS),
        memory: [...(old?.memory ?? []), j.memoryBytes].slice(-SPARK_POINTS),
        at,
      });
    }
  }
  return next;
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

/**
 * A small line chart of `points` (newest at the right), scaled to `max`. The picture is
 * decorative; `label` says the current value for screen readers.
 */
function Sparkline({ points, max, label }: { points: number[]; max: number; label: string }) {
  const w = 60;
  const h = 16;
  const step = w / (SPARK_POINTS - 1);
  // A single sample is drawn as a short level line.
  const shown = points.length === 1 ? [points[0], points[0]] : points;
  const start = w - step * (shown.length - 1);
  // One pixel of margin: a line at 0 or at the maximum stays a visible line.
  const y = (p: number) => (1 + (h - 2) * (1 - Math.min(p, max) / max)).toFixed(1);
  const d = shown.map((p, i) => `${(start + i * step).toFixed(1)},${y(p)}`);
  return (
    <svg
      className="spark"
      width={w}
      height={h}
      viewBox={`0 0 ${w} ${h}`}
      role="img"
      aria-label={label}
      data-testid="sparkline"
    >
      <line className="spark-base" x1="0" y1={h - 0.5} x2={w} y2={h - 0.5} />
      {shown.length > 1 && (
        <polyline points={d.join(" ")} fill="none" stroke="currentColor" strokeWidth="1.5" />
      )}
    </svg>
  );
}

function CpuCell({ job, samples }: { job: JobDto; samples: Samples | undefined }) {
  if (job.state !== "running" || job.cpuPercent === null) return <span className="muted">—</span>;
  const now = Math.round(job.cpuPercent);
  const points = samples?.cpu ?? [job.cpuPercent];
  const peak = Math.round(Math.max(...points));
  return (
    <span className="metric">
      <Sparkline
        points={points}
        max={Math.max(100, ...points)}
        label={`CPU ${now}%` + (peak > now ? `, peak ${peak}%` : "")}
      />
      <span>{now}%</span>
    </span>
  );
}

function MemoryCell({ job, samples }: { job: JobDto; samples: Samples | undefined }) {
  if (job.state !== "running" || job.memoryBytes === null) return <span className="muted">—</span>;
  const points = samples?.memory ?? [job.memoryBytes];
  const peak = Math.max(...points);
  const now = humanBytes(job.memoryBytes);
  return (
    <span className="metric">
      <Sparkline
        points={points}
        // Headroom above the peak, so a steady job is a line, not the top edge.
        max={Math.max(1, peak * 1.25)}
        label={`Memory ${now}` + (peak > job.memoryBytes ? `, peak ${humanBytes(peak)}` : "")}
      />
      <span>{now}</span>
    </span>
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
  // Every reload of the list (at least one per engine sample of a running job) adds its
  // samples; the history lives as long as the view.
  const [samples, setSamples] = useState<ReadonlyMap<string, Samples>>(() => new Map());
  useEffect(() => {
    setSamples((prev) => recordSamples(prev, props.jobs, Date.now()));
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
      <table className="list jobs">
        <thead>
          <tr>
            <th>State</th>
            <th>Command</th>
            <th>Project</th>
            <th>Started</th>
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
                <td data-testid="job-started">
                  {j.startedMs === null ? (
                    <span className="muted">{j.state === "queued" ? "waiting" : "—"}</span>
                  ) : (
                    <time dateTime={new Date(j.startedMs).toISOString()} title={exactTime(j.startedMs)}>
                      {clockTime(j.startedMs, now)}
                    </time>
                  )}
                </td>
                <td>{t === null ? <span className="muted">—</span> : duration(t)}</td>
                <td>
                  <CpuCell job={j} samples={samples.get(j.id)} />
                </td>
                <td>
                  <MemoryCell job={j} samples={samples.get(j.id)} />
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
  const open = async (port: number) => {
    try {
      await api.openJobPort(j.id, port);
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const failed = isFailure(j.state);
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
        {j.exitCode !== null && (
          <span data-testid="job-exit" className={failed ? "error" : undefined}>
            Exit code {j.exitCode}
          </span>
        )}
        {j.signal !== null && (
          <span data-testid="job-signal" className={failed ? "error" : undefined}>
            Ended by signal {j.signal}
          </span>
        )}
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
      {j.interactive && (
        <p className="muted" data-testid="job-interactive">
          Interactive ({j.interactive}): the assistant that started it can type into it.
        </p>
      )}
      {j.ports.length > 0 && (
        <p className="row" data-testid="job-ports">
          <span>Published:</span>
          {j.ports.map((p) => (
            <button
              key={p.port}
              type="button"
              className="link"
              title={`Port ${p.port} of the job, on this computer`}
              onClick={() => void open(p.port)}
            >
              <Text mono>{p.url}</Text>
            </button>
          ))}
        </p>
      )}
      <ErrorLine error={error} />
      {failed && <FailureTail job={j} />}
      <LogView job={j} activity={props.activity} />
    </section>
  );
}

/**
 * The last `n` lines of `text`, without a trailing empty line; `partial` says the text starts
 * mid-log, so its first line may be cut and is dropped.
 */
export function lastLines(text: string, partial: boolean, n: number): string[] {
  const lines = text.split("\n");
  while (lines.length > 0 && lines[lines.length - 1].trim() === "") lines.pop();
  if (partial && lines.length > 1) lines.shift();
  return lines.slice(-n);
}

/** A failed job's last lines of each stream, read from the end of its log. */
function FailureTail({ job }: { job: JobDto }) {
  const [tails, setTails] = useState<{ stream: LogStream; lines: string[] }[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { id, stdoutBytes, stderrBytes } = job;
  useEffect(() => {
    let live = true;
    const streams = [
      { stream: "stderr" as const, total: stderrBytes },
      { stream: "stdout" as const, total: stdoutBytes },
    ].filter((s) => s.total > 0);
    Promise.all(
      streams.map(async ({ stream, total }) => {
        const cursor = Math.max(0, total - TAIL_BYTES);
        const page = await api.jobLogs({ id, stream, cursor, maxBytes: TAIL_BYTES });
        return { stream, lines: lastLines(page.text, page.cursor > 0, TAIL_LINES) };
      }),
    ).then(
      (t) => {
        if (!live) return;
        setTails(t.filter((x) => x.lines.length > 0));
        setError(null);
      },
      (e) => live && setError(errorMessage(e)),
    );
    return () => {
      live = false;
    };
  }, [id, stdoutBytes, stderrBytes]);

  const how =
    job.state === "timed-out"
      ? "timed out"
      : job.exitCode !== null
        ? `failed with exit code ${job.exitCode}`
        : job.signal !== null
          ? `was ended by signal ${job.signal}`
          : "failed";
  return (
    <section className="failure" aria-label="How it ended" data-testid="job-failure">
      <h3>
        It {how}
        {tails && tails.length > 0 ? "; its last lines:" : "."}
      </h3>
      <ErrorLine error={error} />
      {tails?.length === 0 && <p className="muted">It wrote no output.</p>}
      {tails?.map((t) => (
        <div key={t.stream}>
          <span className="muted">{t.stream === "stdout" ? "Output" : "Errors"}</span>
          <pre className="log-tail" data-testid={`job-tail-${t.stream}`}>
            {visible(t.lines.join("\n"))}
          </pre>
        </div>
      ))}
    </section>
  );
}

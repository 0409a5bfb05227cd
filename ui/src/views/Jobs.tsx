// Jobs: the commands assistants run — running and recent, with state, start, duration, and CPU
// and memory as sparklines of the samples seen while the view is open — and the selected job's
// live log (virtualized, follow, search, copy) with Cancel; a failed job shows its exit code and
// last lines. Log text is rendered as text, never HTML; the log kept in the window is bounded.

import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import type { ReactNode, UIEvent as ReactUIEvent } from "react";
import { api } from "../api";
import type { JobDto, JobStateDto, LogStream, ProjectDto } from "../bindings/ipc";
import { ConfirmButton, ErrorLine, Text, errorMessage, useNow } from "../components";
import { clockTime, exactTime, humanBytes, visible } from "../format";

/** Bytes per log request (the engine caps a page at 64 KiB). */
const PAGE_BYTES = 64 * 1024;
/** Pages read per refresh at most, so a flood of output cannot keep the window busy. */
const MAX_PAGES_PER_READ = 16;
/** Characters of log the window keeps; older output is dropped from the view. */
export const MAX_LOG_CHARS = 1_000_000;
/** Samples kept per job for the sparklines: a minute at the engine's one sample a second. */
export const SPARK_POINTS = 60;
/**
 * The list is reloaded on every job event, output included, so one engine sample (every
 * second) is seen several times: a new point starts only after this much more runtime.
 */
const SAMPLE_SPACING_MS = 900;
/** The log's fixed line height and viewport height, in CSS pixels (the virtualization's unit). */
export const LOG_LINE_PX = 18;
export const LOG_HEIGHT_PX = 320;
/** Lines rendered beyond each edge of the viewport, so fast scrolling shows no gap. */
export const LOG_OVERSCAN = 10;
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

export const isFinal = (s: JobStateDto) => s !== "queued" && s !== "running";
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

/** Drops whole lines from the start until `text` fits in `max` characters. */
export function bound(text: string, max: number): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  let from = text.length - max;
  const nl = text.indexOf("\n", from);
  if (nl !== -1 && nl + 1 < text.length) from = nl + 1;
  return { text: text.slice(from), cut: true };
}

/** The indexes of the lines containing `query` (already lower-case), ignoring case. */
function findMatches(lines: string[], query: string): number[] {
  const found: number[] = [];
  if (!query) return found;
  lines.forEach((l, i) => {
    if (l.toLowerCase().includes(query)) found.push(i);
  });
  return found;
}

/** A log line with each occurrence of `query` marked (text nodes and `<mark>`s only). */
function Marked({ line, query }: { line: string; query: string }): ReactNode {
  const lower = line.toLowerCase();
  // Lower-casing changed the length (a few non-ASCII letters): mark nothing rather than
  // the wrong characters; the line itself is still highlighted as a match.
  if (!query || lower.length !== line.length) return line;
  const parts: ReactNode[] = [];
  let at = 0;
  for (let i = lower.indexOf(query); i !== -1; i = lower.indexOf(query, at)) {
    parts.push(line.slice(at, i));
    parts.push(<mark key={i}>{line.slice(i, i + query.length)}</mark>);
    at = i + query.length;
  }
  parts.push(line.slice(at));
  return parts;
}

function LogView({ job, activity }: { job: JobDto; activity: number }) {
  const [stream, setStream] = useState<LogStream>("stdout");
  const [text, setText] = useState("");
  const [cut, setCut] = useState(false);
  const [dropped, setDropped] = useState(0);
  const [follow, setFollow] = useState(true);
  const [search, setSearch] = useState("");
  const [current, setCurrent] = useState(0);
  const [top, setTop] = useState(0);
  const [copied, setCopied] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const cursor = useRef(0);
  const done = useRef(false);
  const reading = useRef<Promise<void> | null>(null);
  const again = useRef(false);
  const generation = useRef(0);
  const box = useRef<HTMLDivElement>(null);

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
    setCopied(null);
    void read();
  }, [read]);

  // Job events (output, samples, the end) read on.
  useEffect(() => {
    if (!done.current) void read();
  }, [activity, job.state, read]);

  // The lines as shown: deceptive characters made visible, without the empty "line" after
  // the final newline.
  const lines = useMemo(() => {
    const l = visible(text).split("\n");
    if (l.length > 1 && l[l.length - 1] === "") l.pop();
    return l;
  }, [text]);
  const query = search.trim().toLowerCase();
  const matches = useMemo(() => (query ? findMatches(lines, query) : null), [lines, query]);
  const at = matches && matches.length > 0 ? Math.min(current, matches.length - 1) : -1;

  /** The viewport's height: the element's when laid out, else the height it is given. */
  const viewport = () => box.current?.clientHeight || LOG_HEIGHT_PX;
  const scrollTo = useCallback((px: number) => {
    const el = box.current;
    const max = Math.max(0, lines.length * LOG_LINE_PX - (el?.clientHeight || LOG_HEIGHT_PX));
    const t = Math.min(Math.max(0, px), max);
    if (el) el.scrollTop = t;
    setTop(t);
  }, [lines.length]);
  /** Brings line `i` to the middle of the viewport. */
  const reveal = (i: number) => scrollTo(i * LOG_LINE_PX - (viewport() - LOG_LINE_PX) / 2);

  // Following keeps the newest line in view as lines arrive (before paint: no flicker).
  useLayoutEffect(() => {
    if (follow) scrollTo(Number.MAX_SAFE_INTEGER);
  }, [follow, lines.length, scrollTo]);

  const onScroll = (e: ReactUIEvent<HTMLDivElement>) => {
    const el = e.currentTarget;
    setTop(el.scrollTop);
    // Scrolling up to read stops following; the checkbox turns it back on.
    const below = lines.length * LOG_LINE_PX - el.scrollTop - (el.clientHeight || LOG_HEIGHT_PX);
    if (follow && below > LOG_LINE_PX) setFollow(false);
  };

  const onSearch = (value: string) => {
    setSearch(value);
    setCurrent(0);
    const found = findMatches(lines, value.trim().toLowerCase());
    if (found.length > 0) {
      // A match is read where it is: following would pull the view away from it.
      setFollow(false);
      reveal(found[0]);
    }
  };
  const step = (by: number) => {
    if (!matches || matches.length === 0) return;
    const next = (Math.max(at, 0) + by + matches.length) % matches.length;
    setCurrent(next);
    setFollow(false);
    reveal(matches[next]);
  };

  const copy = async () => {
    try {
      await api.copy(text, false);
      setCopied(`Copied ${lines.length.toLocaleString()} ${lines.length === 1 ? "line" : "lines"}.`);
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  // The virtual window: only the lines in view, and a few beyond, are in the document.
  const total = text ? lines.length : 0;
  const height = viewport();
  const shownTop = Math.min(top, Math.max(0, total * LOG_LINE_PX - height));
  const first = Math.max(0, Math.floor(shownTop / LOG_LINE_PX) - LOG_OVERSCAN);
  const last = Math.min(total, Math.ceil((shownTop + height) / LOG_LINE_PX) + LOG_OVERSCAN);
  const matchSet = useMemo(() => new Set(matches ?? []), [matches]);
  const rows: ReactNode[] = [];
  for (let i = first; i < last; i++) {
    const hit = matchSet.has(i);
    const isCurrent = at >= 0 && matches![at] === i;
    rows.push(
      <div
        key={i}
        className={"log-line" + (hit ? " match" : "") + (isCurrent ? " current" : "")}
        data-testid="log-line"
        data-line={i + 1}
        aria-current={isCurrent ? "true" : undefined}
      >
        {hit ? <Marked line={lines[i]} query={query} /> : lines[i]}
        {/* The line's own newline: copied selections and the element's text (WebDriver reads
            no break between blocks) keep their lines. It adds no line box. */}
        {"\n"}
      </div>,
    );
  }
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
            title="Enter: next match · Shift+Enter: previous"
            value={search}
            onChange={(e) => onSearch(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter") {
                e.preventDefault();
                step(e.shiftKey ? -1 : 1);
              }
            }}
          />
        </label>
        {matches && (
          <>
            <button
              type="button"
              className="small"
              aria-label="Previous match"
              disabled={matches.length === 0}
              onClick={() => step(-1)}
            >
              ↑
            </button>
            <button
              type="button"
              className="small"
              aria-label="Next match"
              disabled={matches.length === 0}
              onClick={() => step(1)}
            >
              ↓
            </button>
            <span className="muted" data-testid="log-matches" aria-live="polite">
              {matches.length === 0
                ? "No matching lines"
                : `${at + 1} of ${matches.length} matching ${matches.length === 1 ? "line" : "lines"}`}
            </span>
          </>
        )}
        <button type="button" onClick={() => void copy()} disabled={!text}>
          Copy
        </button>
        <span className="muted" role="status">
          {copied ?? ""}
        </span>
      </div>
      {(cut || dropped > 0) && (
        <p className="muted">
          Older output is not shown ({dropped > 0 ? `${humanBytes(dropped)} dropped by Sluice's bounded log` : "the window keeps the newest part"}).
        </p>
      )}
      <ErrorLine error={error} />
      <div
        className="log-text mono"
        ref={box}
        data-testid="job-log"
        role="region"
        aria-label={`Log of ${visible(job.command)}`}
        tabIndex={0}
        onScroll={onScroll}
        style={{ height: LOG_HEIGHT_PX }}
      >
        {total === 0 ? (
          <span className="muted log-empty">{bytes === 0 ? "No output yet." : ""}</span>
        ) : (
          <div className="log-spacer" data-testid="log-spacer" style={{ height: total * LOG_LINE_PX }}>
            <div className="log-lines" style={{ top: first * LOG_LINE_PX }}>
              {rows}
            </div>
          </div>
        )}
      </div>
    </div>
  );
}

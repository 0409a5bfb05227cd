// A job's live log in the Jobs view: read by cursor as the job writes, bounded, virtualized
// (only the lines in view are in the document), with follow, search and copy. Log text is
// rendered as text, never HTML. An interactive job's log is its live session: a terminal job's
// one stream (the terminal shows what the program writes and echoes what is typed), a caret
// where the next output goes while it runs. The user watches it and does not type into it:
// the assistant reads everything the program shows, so a user's answer to a prompt would go
// to the assistant as the program's output, and two typists in one program (each unaware of
// the other) is how a REPL runs what neither meant. Cancel job stops it; the user's own
// terminal is for working by hand.

import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import type { ReactNode, UIEvent as ReactUIEvent } from "react";
import { api } from "../api";
import type { JobDto, JobStateDto, LogStream } from "../bindings/ipc";
import { ErrorLine, errorMessage } from "../components";
import { humanBytes, visible } from "../format";

/** Whether a job in state `s` has ended (nothing more will be written to its log). */
export const isFinal = (s: JobStateDto) => s !== "queued" && s !== "running";

/** Bytes per log request (the engine caps a page at 64 KiB). */
const PAGE_BYTES = 64 * 1024;
/** Pages read per refresh at most, so a flood of output cannot keep the window busy. */
const MAX_PAGES_PER_READ = 16;
/** Characters of log the window keeps; older output is dropped from the view. */
export const MAX_LOG_CHARS = 1_000_000;
/** The log's fixed line height and viewport height, in CSS pixels (the virtualization's unit). */
export const LOG_LINE_PX = 18;
export const LOG_HEIGHT_PX = 320;
/** Lines rendered beyond each edge of the viewport, so fast scrolling shows no gap. */
export const LOG_OVERSCAN = 10;

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

/**
 * The log of one stream of `job`, read by cursor from the start and on at every job event
 * (`activity`, a state change), at most [MAX_PAGES_PER_READ] pages a time, one read at a time;
 * bounded to [MAX_LOG_CHARS]. `cut` says older text was dropped here, `dropped` how many bytes
 * the engine's bounded log dropped. A new stream starts over.
 */
function useJobLog(job: JobDto, stream: LogStream, activity: number) {
  const [text, setText] = useState("");
  const [cut, setCut] = useState(false);
  const [dropped, setDropped] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const cursor = useRef(0);
  const done = useRef(false);
  const reading = useRef<Promise<void> | null>(null);
  const again = useRef(false);
  const generation = useRef(0);

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

  return { text, cut, dropped, error, setError };
}

export function LogView({ job, activity }: { job: JobDto; activity: number }) {
  const [stream, setStream] = useState<LogStream>("stdout");
  const { text, cut, dropped, error, setError } = useJobLog(job, stream, activity);
  /** An interactive job still running: its session is live. */
  const live = job.interactive !== null && !isFinal(job.state);
  const [follow, setFollow] = useState(true);
  const [search, setSearch] = useState("");
  const [current, setCurrent] = useState(0);
  const [top, setTop] = useState(0);
  const [copied, setCopied] = useState<string | null>(null);
  const box = useRef<HTMLDivElement>(null);

  // A new stream forgets what was copied from the old one.
  useEffect(() => setCopied(null), [job.id, stream]);

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
        {live && i === total - 1 && !text.endsWith("\n") && <span className="caret" aria-hidden="true" />}
        {/* The line's own newline: copied selections and the element's text (WebDriver reads
            no break between blocks) keep their lines. It adds no line box. */}
        {"\n"}
      </div>,
    );
  }
  const bytes = stream === "stdout" ? job.stdoutBytes : job.stderrBytes;
  // A terminal job writes everything to its terminal: one stream, named as what it is.
  const streams: { s: LogStream; label: string }[] =
    job.interactive === "terminal"
      ? [{ s: "stdout", label: "Terminal" }]
      : [
          { s: "stdout", label: "Output" },
          { s: "stderr", label: "Errors" },
        ];

  return (
    <div className="log">
      <div className="row log-tools">
        <div className="segmented" role="group" aria-label="Stream">
          {streams.map(({ s, label }) => (
            <button key={s} type="button" aria-pressed={stream === s} onClick={() => setStream(s)}>
              {label} ({humanBytes(s === "stdout" ? job.stdoutBytes : job.stderrBytes)})
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
      {job.interactive !== null && (
        <p className="muted" data-testid="job-session">
          {live
            ? "Live session, read-only here: the assistant that started it types into it, and you see what the program shows. Cancel job stops it."
            : "The session has ended; this is what the program showed."}
        </p>
      )}
      <ErrorLine error={error} />
      <div
        className={"log-text mono" + (job.interactive !== null ? " session" : "")}
        ref={box}
        data-testid="job-log"
        role="region"
        aria-label={`Log of ${visible(job.command)}`}
        tabIndex={0}
        onScroll={onScroll}
        style={{ height: LOG_HEIGHT_PX }}
      >
        {total === 0 ? (
          <span className="muted log-empty">
            {bytes === 0 ? (live ? "Waiting for the program to write." : "No output yet.") : ""}
          </span>
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

// Small shared pieces: engine text, times, inline confirmation, error lines, an add field.

import { type ReactNode, useEffect, useState } from "react";
import { exactTime, relativeTime, visible } from "./format";

/** Engine-provided text: rendered as text, with deceptive characters made visible. */
export function Text({ children, mono }: { children: string; mono?: boolean }) {
  const shown = visible(children);
  return mono ? <code className="mono">{shown}</code> : <>{shown}</>;
}

/** A relative time ("3 minutes ago"), with the exact local time on hover. */
export function Time({ ms, empty = "never" }: { ms: number | null; empty?: string }) {
  if (ms === null) return <span className="muted">{empty}</span>;
  return (
    <time dateTime={new Date(ms).toISOString()} title={exactTime(ms)}>
      {relativeTime(ms)}
    </time>
  );
}

export function ErrorLine({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {error}
    </p>
  );
}

/** The end of a sheet: its error, if any, then its action and Cancel. */
export function FormActions(props: { error: string | null; submit: string; onCancel: () => void }) {
  return (
    <>
      <ErrorLine error={props.error} />
      <div className="row">
        <button type="submit" className="primary">
          {props.submit}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </>
  );
}

/** A destructive action that asks first, in place. */
export function ConfirmButton(props: {
  label: string;
  question: string;
  confirmLabel: string;
  onConfirm: () => Promise<void> | void;
  danger?: boolean;
  /** The label of the button that asks nothing more (default "Cancel"). */
  keepLabel?: string;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" className={props.danger ? "danger-text" : ""} onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={props.question}>
      <span>{props.question}</span>
      <button
        type="button"
        className="danger"
        onClick={async () => {
          setAsking(false);
          await props.onConfirm();
        }}
      >
        {props.confirmLabel}
      </button>
      <button type="button" autoFocus onClick={() => setAsking(false)}>
        {props.keepLabel ?? "Cancel"}
      </button>
    </span>
  );
}

export function errorMessage(e: unknown): string {
  if (e && typeof e === "object" && "message" in e) return String(e.message);
  return String(e);
}

/** The current time, refreshed every `everyMs` (for durations and countdowns that tick). */
export function useNow(everyMs: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}

/** A field and a button that adds what was typed, trimmed: the editable lists' last row. The
 *  field clears when `add` reports success; `children` go after the button (Restore defaults). */
export function AddField(props: {
  label: string;
  placeholder: string;
  button: string;
  add: (value: string) => Promise<boolean>;
  children?: ReactNode;
}) {
  const [draft, setDraft] = useState("");
  return (
    <div className="row">
      <input
        aria-label={props.label}
        placeholder={props.placeholder}
        value={draft}
        onChange={(e) => setDraft(e.target.value)}
      />
      <button
        type="button"
        disabled={!draft.trim()}
        onClick={async () => {
          if (await props.add(draft.trim())) setDraft("");
        }}
      >
        {props.button}
      </button>
      {props.children}
    </div>
  );
}

// Approvals: what assistants wait for, as cards with the exact action, a countdown and the
// decision; below, the recent decisions. The safe choice is the easy one: Deny has the focus,
// Enter never approves, Esc denies, and the buttons stay inert for a moment after a card
// appears so a click or keypress meant for something else cannot approve it (AP-06).

import { type ReactNode, useEffect, useRef, useState } from "react";
import { ApiError, api } from "../api";
import type {
  ApprovalDto,
  ApprovalStatus,
  AutoRunHitDto,
  CommandDto,
  Net,
  RiskDto,
  Verdict,
} from "../bindings/ipc";
import { ErrorLine, Text, Time, errorMessage, useNow } from "../components";
import { exactTime, visible } from "../format";
import { SandboxSummary } from "./Sandbox";

/** How long a new card's buttons ignore clicks. */
export const INERT_MS = 500;

/** What the command may reach, as the card says it. */
const NETWORK_SENTENCE: Record<Net, string> = {
  off: "Network: off.",
  registries: "Network: only HTTPS to the package registries, through Sluice's proxy.",
  on: "Network: allowed.",
};

const STATUS: Record<ApprovalStatus, string> = {
  pending: "Waiting",
  approved: "Approved",
  denied: "Denied",
  expired: "Expired — nothing was done",
  withdrawn: "Withdrawn by the assistant",
  aborted: "Ended when Sluice stopped",
};

/** "4:05" for a duration in milliseconds (rounded up: "0:01" until it is really over). */
export function countdown(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

export function ApprovalsView(props: {
  approvals: ApprovalDto[];
  paused: boolean;
  reload: () => Promise<void>;
}) {
  const now = useNow(1000);
  const [error, setError] = useState<string | null>(null);
  const pending = props.approvals.filter((a) => a.status === "pending");
  const decided = props.approvals.filter((a) => a.status !== "pending");

  const denyAll = async () => {
    const results = await Promise.allSettled(
      pending.map((a) => api.decideApproval(a.id, "deny", null)),
    );
    const failed = results.filter((r) => r.status === "rejected");
    // One decided elsewhere meanwhile is not a failure worth showing.
    const real = failed.filter(
      (r) => !(r.status === "rejected" && r.reason instanceof ApiError && r.reason.code === "conflict"),
    );
    setError(real.length ? errorMessage((real[0] as PromiseRejectedResult).reason) : null);
    await props.reload();
  };

  return (
    <section aria-label="Approvals">
      <div className="section-head">
        <h1>Approvals</h1>
        {pending.length > 1 && (
          <button type="button" className="danger" onClick={denyAll}>
            Deny all ({pending.length})
          </button>
        )}
      </div>
      <ErrorLine error={error} />
      {pending.length === 0 ? (
        <div className="empty">
          <h2>No approvals waiting</h2>
          <p>
            When an assistant asks to change or delete a file, the request appears here with the
            exact details — who asks, what exactly, in which project — and you choose Approve
            once or Deny. Waiting requests also show in the tray menu.
          </p>
        </div>
      ) : (
        pending.map((a, i) => (
          <ApprovalCard
            key={a.id}
            approval={a}
            now={now}
            paused={props.paused}
            focusFirst={i === 0}
            onDecided={props.reload}
          />
        ))
      )}
      {decided.length > 0 && <RecentDecisions approvals={decided} />}
    </section>
  );
}

function ApprovalCard(props: {
  approval: ApprovalDto;
  now: number;
  paused: boolean;
  focusFirst: boolean;
  onDecided: () => Promise<void>;
}) {
  const a = props.approval;
  const [armed, setArmed] = useState(false);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const denyRef = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    const t = setTimeout(() => setArmed(true), INERT_MS);
    return () => clearTimeout(t);
  }, []);
  useEffect(() => {
    if (props.focusFirst) denyRef.current?.focus();
    // Only when the card appears: later cards never steal the focus.
  }, [props.focusFirst]);

  const left = a.expiresMs - props.now;
  const expired = left <= 0;

  const decide = async (verdict: Verdict) => {
    if (busy || expired) return;
    setBusy(true);
    try {
      await api.decideApproval(a.id, verdict, verdict === "deny" ? reason.trim() || null : null);
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
    await props.onDecided();
  };
  const deny = () => void decide("deny");

  const lines = visible(a.summary).split("\n");
  return (
    <article
      className="card approval"
      aria-label={visible(`Approval: ${a.tokenLabel} · ${a.tool} · ${a.projectName}`)}
      data-testid="approval-card"
      data-armed={armed ? "true" : "false"}
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.preventDefault();
          deny();
        }
      }}
    >
      <h2>
        <Text>{a.tokenLabel}</Text> wants to <Text mono>{a.tool}</Text> in{" "}
        <Text>{a.projectName}</Text>
      </h2>
      <pre className="summary" data-testid="approval-summary">
        {lines.map((l, i) => (
          <div key={i}>{l}</div>
        ))}
      </pre>
      {a.autorun.length > 0 && <AutoRunWarning autorun={a.autorun} />}
      {a.command && <CommandTokens command={a.command} />}
      {a.command?.sandbox && <SandboxSummary sandbox={a.command.sandbox} />}
      {a.risk && <RiskLine risk={a.risk} />}
      <p className="muted">
        Asked <Time ms={a.createdMs} /> ·{" "}
        <span
          data-testid="approval-countdown"
          className={left < 30_000 ? "urgent" : ""}
          title={`Expires at ${exactTime(a.expiresMs)}; unanswered, it is denied`}
        >
          {expired ? "Expired — nothing will be done" : `Expires in ${countdown(left)}`}
        </span>
      </p>
      <label className="reason">
        Reason <span className="muted">(optional; sent to the assistant when you deny)</span>
        <input
          name="reason"
          value={reason}
          maxLength={500}
          onChange={(e) => setReason(e.target.value)}
          onKeyDown={(e) => {
            // Enter in the reason field denies with that reason; it never approves.
            if (e.key === "Enter") {
              e.preventDefault();
              if (armed) deny();
            }
          }}
        />
      </label>
      <ErrorLine error={error} />
      <div className="row">
        <button
          ref={denyRef}
          type="button"
          className="danger"
          aria-disabled={!armed || busy || expired}
          onClick={() => armed && deny()}
        >
          Deny
        </button>
        <ApproveButton
          disabled={!armed || busy || expired || props.paused}
          paused={props.paused}
          onApprove={() => armed && void decide("approve")}
        >
          Approve once
        </ApproveButton>
        {a.alwaysAllowable && (
          <ApproveButton
            disabled={!armed || busy || expired || props.paused}
            paused={props.paused}
            onApprove={() => armed && void decide("approve-always")}
            title="Approve, and from now on run exactly this command (same arguments, folder and environment) in this project without asking"
          >
            Always allow this command
          </ApproveButton>
        )}
        {props.paused && <span className="muted">Resume AI access to approve.</span>}
      </div>
    </article>
  );
}

/** The files of the change that another program runs on its own, and what it does: the reason
 * this change asks even where changes otherwise do not. */
function AutoRunWarning({ autorun }: { autorun: AutoRunHitDto[] }) {
  return (
    <div className="autorun-warning" role="note" data-testid="approval-autorun">
      <strong>Runs on its own.</strong>{" "}
      {autorun.length === 1 ? "Another program runs this file" : "Other programs run these files"}{" "}
      without asking you:{" "}
      <ul>
        {autorun.map((h, i) => (
          <li key={i}>
            <Text mono>{h.path}</Text>: <Text>{h.consequence}</Text>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Arguments shown before "Show all N arguments". */
export const ARGS_SHOWN = 8;

/** The exact command, one token per argument, so a space or a quote inside an argument can
 * never pass for a separate one; long argument lists are folded, never cut silently. Controls,
 * bidi overrides and zero-width characters inside a token show as `⟨U+202E⟩`. */
function CommandTokens({ command }: { command: CommandDto }) {
  const [all, setAll] = useState(false);
  const [program, ...args] = command.argv;
  const shown = all ? args : args.slice(0, ARGS_SHOWN);
  return (
    <div className="command" data-testid="approval-command">
      <ol className="argv" aria-label="The exact command, one argument each">
        <li>
          <code className="mono">{visible(program)}</code>
        </li>
        {shown.map((arg, i) => (
          <li key={i}>
            <code className="mono">{arg === "" ? "(empty argument)" : visible(arg)}</code>
          </li>
        ))}
      </ol>
      {args.length > shown.length && (
        <button type="button" className="link" onClick={() => setAll(true)}>
          Show all {args.length} arguments
        </button>
      )}
      <p className="muted">
        In {command.cwd === "" ? "the project's root" : <Text mono>{command.cwd}</Text>}
        {command.env.length > 0 && (
          <>
            {" "}
            with <Text mono>{command.env.join(" ")}</Text>
          </>
        )}
      </p>
      <p className="muted" data-testid="approval-confinement">
        {NETWORK_SENTENCE[command.network]} {visible(command.confinement)}
      </p>
    </div>
  );
}

/** The risk class and why, as Sluice's policy worked them out: "Risk: arbitrary program
 * (caution). Why: runs `echo`." */
function RiskLine({ risk }: { risk: RiskDto }) {
  return (
    <p className="risk" data-testid="approval-risk">
      Risk: <Text>{risk.class}</Text>
      {risk.level && <span className={`risk-${risk.level}`}> ({risk.level})</span>}. Why:{" "}
      <Text>{risk.why}</Text>
    </p>
  );
}

/** A button that approves: never on Enter, only a click or Space. */
function ApproveButton(props: {
  disabled: boolean;
  paused: boolean;
  onApprove: () => void;
  title?: string;
  children: ReactNode;
}) {
  return (
    <button
      type="button"
      disabled={props.disabled}
      title={props.paused ? "AI access is paused; resume it before approving" : props.title}
      onKeyDown={(e) => {
        // Enter never approves: only a click or Space on this button does.
        if (e.key === "Enter") e.preventDefault();
      }}
      onClick={props.onApprove}
    >
      {props.children}
    </button>
  );
}

function RecentDecisions({ approvals }: { approvals: ApprovalDto[] }) {
  return (
    <section aria-label="Recent decisions">
      <h2>Recent decisions</h2>
      <table className="list">
        <thead>
          <tr>
            <th>When</th>
            <th>Asked by</th>
            <th>Action</th>
            <th>Project</th>
            <th>Outcome</th>
            <th>Decided by</th>
          </tr>
        </thead>
        <tbody>
          {approvals.map((a) => (
            <tr key={a.id} data-testid="decision-row">
              <td>
                <Time ms={a.decidedMs ?? a.createdMs} />
              </td>
              <td>
                <Text>{a.tokenLabel}</Text>
              </td>
              <td>
                <Text mono>{a.tool}</Text> <Text mono>{a.summary}</Text>
              </td>
              <td>
                <Text>{a.projectName}</Text>
              </td>
              <td className={`decision-${a.status}`}>
                {STATUS[a.status]}
                {a.reason && (
                  <>
                    : <Text>{a.reason}</Text>
                  </>
                )}
              </td>
              <td>
                <Text>{a.decidedBy ?? "—"}</Text>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

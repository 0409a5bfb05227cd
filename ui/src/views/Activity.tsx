// Activity: the audit log, newest first, with filters and the chain's status.

import { useCallback, useEffect, useMemo, useState } from "react";
import { api } from "../api";
import type {
  AuditEntryDto,
  ChainStatus,
  Outcome,
  ProjectDto,
  TokenDto,
} from "../bindings/ipc";
import { ErrorLine, Text, Time, errorMessage } from "../components";
import { visible } from "../format";

export const PAGE = 200;

export function ActivityView(props: { projects: ProjectDto[]; tokens: TokenDto[] }) {
  const [entries, setEntries] = useState<AuditEntryDto[]>([]);
  const [chain, setChain] = useState<ChainStatus | null>(null);
  const [token, setToken] = useState("");
  const [project, setProject] = useState("");
  const [action, setAction] = useState("");
  const [outcome, setOutcome] = useState<Outcome | "">("");
  const [error, setError] = useState<string | null>(null);
  // Whether the last page was full, so older entries may exist.
  const [more, setMore] = useState(false);

  const query = useMemo(
    () => ({
      token: token || null,
      project: project || null,
      action: action.trim() || null,
      outcome: outcome || null,
      limit: PAGE,
    }),
    [token, project, action, outcome],
  );
  const load = useCallback(async () => {
    try {
      const page = await api.audit({ ...query, beforeSeq: null });
      setEntries(page.entries);
      setMore(page.entries.length === PAGE);
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    }
  }, [query]);
  // Verifying reads the whole chain: on opening and on Refresh, not on every filter change.
  const verify = useCallback(async () => {
    try {
      setChain(await api.verifyAudit());
    } catch (e) {
      setError(errorMessage(e));
    }
  }, []);
  const older = async () => {
    const last = entries.at(-1);
    if (!last) return;
    try {
      const page = await api.audit({ ...query, beforeSeq: last.seq });
      setEntries((shown) => [...shown, ...page.entries]);
      setMore(page.entries.length === PAGE);
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => {
    void verify();
  }, [verify]);

  return (
    <section aria-label="Activity">
      <div className="section-head">
        <h1>Activity</h1>
        <button type="button" onClick={() => void Promise.all([load(), verify()])}>
          Refresh
        </button>
      </div>
      {chain && <ChainBanner chain={chain} />}
      <div className="filters" role="group" aria-label="Filters">
        <label>
          Token
          <select value={token} onChange={(e) => setToken(e.target.value)}>
            <option value="">All</option>
            {props.tokens.map((t) => (
              <option key={t.id} value={t.id}>
                {visible(t.label)}
              </option>
            ))}
          </select>
        </label>
        <label>
          Project
          <select value={project} onChange={(e) => setProject(e.target.value)}>
            <option value="">All</option>
            {props.projects.map((p) => (
              <option key={p.id} value={p.id}>
                {visible(p.name)}
              </option>
            ))}
          </select>
        </label>
        <label>
          Tool or action
          <input value={action} onChange={(e) => setAction(e.target.value)} placeholder="read_file" />
        </label>
        <label>
          Outcome
          <select value={outcome} onChange={(e) => setOutcome(e.target.value as Outcome | "")}>
            <option value="">All</option>
            <option value="ok">OK</option>
            <option value="denied">Denied</option>
            <option value="error">Error</option>
          </select>
        </label>
      </div>
      <ErrorLine error={error} />
      {entries.length === 0 ? (
        <p className="muted">Nothing recorded yet{token || project || action || outcome ? " for these filters" : ""}.</p>
      ) : (
        <table className="list">
          <thead>
            <tr>
              <th>When</th>
              <th>Who</th>
              <th>What</th>
              <th>Project</th>
              <th>Outcome</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.seq} data-testid="audit-row">
                <td>
                  <Time ms={e.timeMs} />
                </td>
                <td>
                  <Text>{e.actor}</Text>
                </td>
                <td>
                  <Text mono>{e.action}</Text>
                  {e.detail && (
                    <div className="muted" data-testid="audit-detail">
                      <Text>{e.detail}</Text>
                    </div>
                  )}
                </td>
                <td>{e.projectName ? <Text>{e.projectName}</Text> : <span className="muted">—</span>}</td>
                <td className={`outcome-${e.outcome}`}>
                  {e.outcome}
                  {e.errorCode && (
                    <>
                      {" "}
                      <Text mono>{e.errorCode}</Text>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {more && (
        <button type="button" onClick={() => void older()}>
          Older entries
        </button>
      )}
    </section>
  );
}

function ChainBanner({ chain }: { chain: ChainStatus }) {
  if (chain.intact) {
    return (
      <p className="banner ok" role="status" data-testid="chain-status">
        Audit chain intact — {chain.entries.toLocaleString()} {chain.entries === 1 ? "entry" : "entries"}{" "}
        verified.
      </p>
    );
  }
  return (
    <p className="banner bad" role="alert" data-testid="chain-status">
      Audit chain broken at entry {chain.breakAt ?? "?"}
      {chain.breakReason ? <>: <Text>{chain.breakReason}</Text></> : null}. Entries from there on
      cannot be trusted.
    </p>
  );
}

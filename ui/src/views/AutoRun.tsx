// A project's auto-run list in the Projects view: files other programs run on their own, each
// asking first or refused whatever the approval policy.

import { useEffect, useState } from "react";
import { api } from "../api";
import type { AutoRunActionDto, AutoRunRuleDto, ProjectDto } from "../bindings/ipc";
import { Text, errorMessage } from "../components";
import { visible } from "../format";

/** What an entry of the auto-run list gets, in words. */
const AUTORUN_ACTION: Record<AutoRunActionDto, string> = {
  ask: "asks you",
  refuse: "refused",
};

/** The auto-run list: files other programs run on their own (editor tasks, MCP configs, git
 * hooks, CI). A change to one asks first, even where changes otherwise do not, or is refused.
 * Guarding an entry less (removing it, or letting a refused one ask) is confirmed natively. */
export function AutoRunEditor({
  project,
  onError,
}: {
  project: ProjectDto;
  onError: (e: string | null) => void;
}) {
  const [defaults, setDefaults] = useState<AutoRunRuleDto[]>([]);
  const [pattern, setPattern] = useState("");
  const [program, setProgram] = useState("");
  const [consequence, setConsequence] = useState("");
  const [action, setAction] = useState<AutoRunActionDto>("ask");
  useEffect(() => {
    api.defaultAutorun().then(setDefaults, (e) => onError(errorMessage(e)));
  }, [onError]);
  const rules = project.autorun ?? defaults;
  const refused = rules.filter((r) => r.action === "refuse").length;
  const save = async (next: AutoRunRuleDto[] | null) => {
    try {
      await api.setAutorun(project.id, next);
      onError(null);
      return true;
    } catch (e) {
      onError(errorMessage(e));
      return false;
    }
  };
  const add = async () => {
    const who = program.trim() || "set by you";
    const rule: AutoRunRuleDto = {
      pattern: pattern.trim(),
      action,
      program: who,
      consequence: consequence.trim() || `${who} runs or reads this file on its own`,
    };
    if (await save([...rules.filter((r) => r.pattern !== rule.pattern), rule])) {
      setPattern("");
      setProgram("");
      setConsequence("");
    }
  };
  return (
    <fieldset className="autorun" data-testid="autorun">
      <legend>Files that run on their own</legend>
      <p className="muted">
        Editors, assistants, git hooks and CI run these files without being asked. A change to one
        asks you first — even where changes otherwise don't — or is refused
        {project.autorun === null ? " (the defaults)." : " (your own list)."}
      </p>
      <details>
        <summary>
          {rules.length} {rules.length === 1 ? "entry" : "entries"}, {refused} refused
        </summary>
        <ul>
          {rules.map((r, i) => (
            <li key={`${r.pattern}-${i}`} data-testid="autorun-rule">
              <Text mono>{r.pattern}</Text>{" "}
              <span className={`autorun-${r.action}`}>{AUTORUN_ACTION[r.action]}</span> ·{" "}
              <Text>{r.program}</Text>: <span className="muted"><Text>{r.consequence}</Text></span>{" "}
              <button
                type="button"
                className="small"
                aria-label={
                  r.action === "refuse"
                    ? `Ask instead of refusing changes to ${visible(r.pattern)}`
                    : `Refuse changes to ${visible(r.pattern)}`
                }
                onClick={() =>
                  void save(
                    rules.map((x, j) =>
                      j === i ? { ...x, action: x.action === "refuse" ? "ask" : "refuse" } : x,
                    ),
                  )
                }
              >
                {r.action === "refuse" ? "Ask instead" : "Refuse"}
              </button>{" "}
              <button
                type="button"
                className="small"
                aria-label={`Stop guarding ${visible(r.pattern)}`}
                onClick={() => void save(rules.filter((_, j) => j !== i))}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      </details>
      <div className="row">
        <input
          aria-label="New auto-run pattern"
          placeholder="deploy/**"
          value={pattern}
          onChange={(e) => setPattern(e.target.value)}
        />
        <input
          aria-label="Which program runs it"
          placeholder="the deploy bot"
          value={program}
          onChange={(e) => setProgram(e.target.value)}
        />
        <input
          aria-label="What happens when it changes"
          placeholder="runs these scripts every night"
          value={consequence}
          onChange={(e) => setConsequence(e.target.value)}
        />
        <select
          aria-label="A change to it"
          value={action}
          onChange={(e) => setAction(e.target.value as AutoRunActionDto)}
        >
          <option value="ask">asks you</option>
          <option value="refuse">is refused</option>
        </select>
        <button type="button" disabled={!pattern.trim()} onClick={() => void add()}>
          Add entry
        </button>
        {project.autorun !== null && (
          <button type="button" onClick={() => void save(null)}>
            Restore defaults
          </button>
        )}
      </div>
    </fieldset>
  );
}

//! The versioned schema. Migrations only ever get appended: an applied one is never edited,
//! because `PRAGMA user_version` records how many ran and a changed step would silently diverge.
//!
//! Conventions: STRICT tables; timestamps are unix milliseconds (INTEGER, suffix `_ms`);
//! enumerations are their stable kebab-case strings with CHECK constraints, so a hand-edited
//! row with a typo fails loudly instead of decoding into a wrong mode.

use rusqlite_migration::{M, Migrations};

/// Version 1: projects, tokens and their scopes, the audit chain, key/value state.
const V1: &str = r#"
CREATE TABLE projects (
    id              TEXT PRIMARY KEY NOT NULL,
    name            TEXT NOT NULL COLLATE NOCASE UNIQUE,
    -- The canonical physical path. Never leaves the machine.
    root            TEXT NOT NULL UNIQUE,
    access          TEXT NOT NULL CHECK (access IN ('read-only', 'read-write')),
    exec            TEXT NOT NULL CHECK (exec IN ('off', 'safe', 'project', 'any')),
    state           TEXT NOT NULL DEFAULT 'available'
                    CHECK (state IN ('available', 'disabled', 'root-lost')),
    state_reason    TEXT,
    -- NULL: the default shield list; otherwise a JSON array of patterns.
    shield_patterns TEXT CHECK (shield_patterns IS NULL OR json_type(shield_patterns) = 'array'),
    -- Device and inode of the root when authorized, so a replaced folder is noticed.
    root_dev        INTEGER,
    root_ino        INTEGER,
    created_ms      INTEGER NOT NULL,
    updated_ms      INTEGER NOT NULL,
    -- Execution through the project's own scripts or any program can change files.
    CHECK (access = 'read-write' OR exec IN ('off', 'safe'))
) STRICT;

CREATE TABLE tokens (
    id           TEXT PRIMARY KEY NOT NULL,
    label        TEXT NOT NULL COLLATE NOCASE UNIQUE,
    -- Keyed BLAKE3 of the plaintext; the plaintext is never stored.
    hash         BLOB NOT NULL UNIQUE CHECK (length(hash) = 32),
    -- 1: every project, present and future. 0: only the rows in token_scopes (maybe none).
    all_projects INTEGER NOT NULL CHECK (all_projects IN (0, 1)),
    created_ms   INTEGER NOT NULL,
    last_used_ms INTEGER,
    expires_ms   INTEGER,
    revoked_ms   INTEGER
) STRICT;

-- A join table rather than a JSON list, so removing a project removes it from every scope by
-- cascade, and a token scoped only to removed projects keeps all_projects = 0: it sees nothing.
CREATE TABLE token_scopes (
    token_id   TEXT NOT NULL REFERENCES tokens (id) ON DELETE CASCADE,
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    PRIMARY KEY (token_id, project_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX token_scopes_project ON token_scopes (project_id);

-- Append-only; no foreign keys, because history outlives the projects and tokens it names.
CREATE TABLE audit (
    seq         INTEGER PRIMARY KEY NOT NULL CHECK (seq >= 1),
    time_ms     INTEGER NOT NULL,
    actor       TEXT NOT NULL,
    actor_kind  TEXT NOT NULL CHECK (actor_kind IN ('mcp', 'human')),
    token_id    TEXT,
    action      TEXT NOT NULL,
    project_id  TEXT,
    outcome     TEXT NOT NULL CHECK (outcome IN ('ok', 'denied', 'error')),
    error_code  TEXT,
    duration_ms INTEGER,
    params_hash TEXT,
    mac         BLOB NOT NULL CHECK (length(mac) = 32)
) STRICT;
CREATE INDEX audit_project ON audit (project_id, seq);
CREATE INDEX audit_token ON audit (token_id, seq);

-- Defence in depth for honest code: the MAC chain is what detects a determined editor.
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;

CREATE TABLE kv (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
) STRICT, WITHOUT ROWID;
"#;

/// Version 2: "always allow this exact command in this project" rules. Pending approvals live
/// in the engine's memory (they die with the process); decided ones go to the audit log.
const V2: &str = r#"
CREATE TABLE allow_rules (
    id         INTEGER PRIMARY KEY NOT NULL,
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    -- The exact argv as a JSON array of strings.
    argv       TEXT NOT NULL CHECK (json_type(argv) = 'array'),
    created_ms INTEGER NOT NULL,
    UNIQUE (project_id, argv)
) STRICT;
"#;

/// Version 3: the approval policy of each project, and approvals. An approval row is the record
/// of one "ask": what was shown, for which exact action (the fingerprint of the resolved plan),
/// and how it ended. A pending row left by a process that died is marked `aborted` at the next
/// start and never acted on (PC-01).
const V3: &str = r#"
ALTER TABLE projects ADD COLUMN ask_deletes INTEGER NOT NULL DEFAULT 1 CHECK (ask_deletes IN (0, 1));
ALTER TABLE projects ADD COLUMN ask_writes INTEGER NOT NULL DEFAULT 0 CHECK (ask_writes IN (0, 1));

CREATE TABLE approvals (
    id           TEXT PRIMARY KEY NOT NULL,
    project_id   TEXT NOT NULL,
    project_name TEXT NOT NULL,
    token_id     TEXT NOT NULL,
    token_label  TEXT NOT NULL,
    tool         TEXT NOT NULL,
    summary      TEXT NOT NULL,
    -- Keyed hash of the exact resolved action; the action that runs must hash the same.
    fingerprint  BLOB NOT NULL CHECK (length(fingerprint) = 32),
    created_ms   INTEGER NOT NULL,
    expires_ms   INTEGER NOT NULL,
    state        TEXT NOT NULL DEFAULT 'pending'
                 CHECK (state IN ('pending', 'approved', 'denied', 'expired', 'withdrawn', 'aborted')),
    decided_ms   INTEGER,
    decided_by   TEXT,
    reason       TEXT
) STRICT;
CREATE INDEX approvals_pending ON approvals (state, created_ms);
"#;

/// Version 4: an allow rule binds the working folder and the environment additions too, since
/// the exact command is all of them (the same argv in another folder is another command).
const V4: &str = r#"
CREATE TABLE allow_rules_v4 (
    id         INTEGER PRIMARY KEY NOT NULL,
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    -- The exact argv (the resolved program first) as a JSON array of strings.
    argv       TEXT NOT NULL CHECK (json_type(argv) = 'array'),
    -- The normalized project-relative working folder; '' is the root.
    cwd        TEXT NOT NULL DEFAULT '',
    -- The environment additions, sorted, as a JSON array of [name, value] pairs.
    env        TEXT NOT NULL DEFAULT '[]' CHECK (json_type(env) = 'array'),
    created_ms INTEGER NOT NULL,
    UNIQUE (project_id, argv, cwd, env)
) STRICT;
INSERT INTO allow_rules_v4 (id, project_id, argv, created_ms)
    SELECT id, project_id, argv, created_ms FROM allow_rules;
DROP TABLE allow_rules;
ALTER TABLE allow_rules_v4 RENAME TO allow_rules;
"#;

/// Version 5: the outbound network setting of each project's jobs. NULL follows the execution
/// mode's default (see `sluice_engine`); 'on' / 'off' is the user's explicit choice.
const V5: &str = r#"
ALTER TABLE projects ADD COLUMN network TEXT CHECK (network IS NULL OR network IN ('on', 'off'));
"#;

/// Version 6: what each job was and how it ended, so status and lists survive a restart (logs
/// stay in memory only). No foreign keys: like the audit log, history outlives projects and
/// tokens. `lost` marks a job whose engine stopped before it finished.
const V6: &str = r#"
CREATE TABLE jobs (
    id         TEXT PRIMARY KEY NOT NULL,
    project_id TEXT NOT NULL,
    token_id   TEXT,
    -- The resolved argv for display (redacted); never output.
    command    TEXT NOT NULL,
    -- The normalized project-relative working folder; '' is the root.
    cwd        TEXT NOT NULL DEFAULT '',
    state      TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed',
                                              'cancelled', 'timed-out', 'lost')),
    error      TEXT,
    exit_code  INTEGER,
    signal     INTEGER,
    created_ms INTEGER NOT NULL,
    started_ms INTEGER,
    ended_ms   INTEGER
) STRICT;
CREATE INDEX jobs_project ON jobs (project_id, created_ms);
CREATE INDEX jobs_state ON jobs (state);
"#;

/// Version 7: an allow rule for a command that runs project-defined text (`npm run`, `make`,
/// `just`) is bound to a hash of that text as approved (AP-05). Rules made before have none,
/// so such a command asks once more.
const V7: &str = r#"
ALTER TABLE allow_rules ADD COLUMN content TEXT;
"#;

/// Version 8: who added each allow rule — where the user granted it (`window`, `tray`, `cli`)
/// and the label of the assistant's token whose request it answered. Rules made before have
/// neither (NULL), and nothing is guessed for them.
const V8: &str = r#"
ALTER TABLE allow_rules ADD COLUMN added_from TEXT
    CHECK (added_from IS NULL OR added_from IN ('window', 'tray', 'cli'));
ALTER TABLE allow_rules ADD COLUMN asked_by TEXT;
"#;

/// Version 9: the auto-run list (paths other programs run on their own, whose changes ask or
/// are refused) of each project, NULL for the defaults; what an approval said would run on its
/// own; and an optional detail line on audit entries (an approval's auto-run consequences), so
/// the log alone says why a change asked. Older entries have none, and their MACs are computed
/// as before.
const V9: &str = r#"
ALTER TABLE projects ADD COLUMN autorun_rules TEXT
    CHECK (autorun_rules IS NULL OR json_type(autorun_rules) = 'array');
ALTER TABLE approvals ADD COLUMN autorun TEXT NOT NULL DEFAULT '[]'
    CHECK (json_type(autorun) = 'array');
ALTER TABLE audit ADD COLUMN detail TEXT;
"#;

/// Version 10: the network setting gains `registries` (only the package registries, through
/// Sluice's proxy). SQLite cannot widen a CHECK in place, so the setting moves to a column of
/// its own; `network` is left unread (NULL from here on).
const V10: &str = r#"
ALTER TABLE projects ADD COLUMN network_mode TEXT
    CHECK (network_mode IS NULL OR network_mode IN ('off', 'registries', 'on'));
UPDATE projects SET network_mode = network, network = NULL;
"#;

/// Version 11: each project's sandbox settings — paths hidden beside the default credential
/// stores, defaults un-hidden, stores granted, host sockets opted in (each a JSON array of
/// paths as the user named them, `~/…` or absolute), and whether jobs require full
/// confinement. Older projects get the defaults: nothing changed, the fallback allowed.
const V11: &str = r#"
ALTER TABLE projects ADD COLUMN hide_paths TEXT NOT NULL DEFAULT '[]'
    CHECK (json_type(hide_paths) = 'array');
ALTER TABLE projects ADD COLUMN unhide_paths TEXT NOT NULL DEFAULT '[]'
    CHECK (json_type(unhide_paths) = 'array');
ALTER TABLE projects ADD COLUMN grants TEXT NOT NULL DEFAULT '[]'
    CHECK (json_type(grants) = 'array');
ALTER TABLE projects ADD COLUMN sockets TEXT NOT NULL DEFAULT '[]'
    CHECK (json_type(sockets) = 'array');
ALTER TABLE projects ADD COLUMN require_full INTEGER NOT NULL DEFAULT 0
    CHECK (require_full IN (0, 1));
"#;

/// Version 12: what an approved change does, counted from its structured effects when it was
/// planned (a JSON object; NULL for commands and for approvals an older Sluice recorded), so the
/// risk every surface shows is never read back from the summary's text; and why it asked (the
/// policy, mode or list that required it), so the audit log alone answers "why did this run";
/// and the limit an assistant put on its own token (`drop_privileges`), with when.
const V12: &str = r#"
ALTER TABLE approvals ADD COLUMN tally TEXT
    CHECK (tally IS NULL OR json_type(tally) = 'object');
ALTER TABLE approvals ADD COLUMN asked_because TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN self_limit TEXT
    CHECK (self_limit IS NULL OR self_limit IN ('read-only', 'paused'));
ALTER TABLE tokens ADD COLUMN self_limited_ms INTEGER;
"#;

/// Version 13: MCP tasks — what each task is and how it ended, never its result (which holds
/// command output and file contents); `is_error` says whether a completed call returned a
/// refusal.
const V13: &str = r#"
CREATE TABLE tasks (
    id         TEXT PRIMARY KEY NOT NULL,
    project_id TEXT NOT NULL,
    token_id   TEXT NOT NULL,
    tool       TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('working', 'completed', 'failed', 'cancelled')),
    is_error   INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1)),
    error      TEXT,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    ttl_ms     INTEGER NOT NULL CHECK (ttl_ms > 0)
) STRICT;
"#;

/// Version 14: seals over the security-relevant state (PC-02, see `seal`). The migration cannot
/// compute them (it runs before the install secret is loaded): it leaves the marker `pending`,
/// and the first `Store::attach_secret` seals the rows as they are and marks sealing begun.
const V14: &str = r#"
ALTER TABLE projects ADD COLUMN seal BLOB CHECK (seal IS NULL OR length(seal) = 32);
ALTER TABLE allow_rules ADD COLUMN seal BLOB CHECK (seal IS NULL OR length(seal) = 32);
ALTER TABLE tokens ADD COLUMN seal BLOB CHECK (seal IS NULL OR length(seal) = 32);
INSERT INTO kv (key, value) VALUES ('sluice.seal', 'pending')
    ON CONFLICT (key) DO UPDATE SET value = excluded.value;
"#;

/// Version 15: reach from hosted assistants (OAuth, see `oauth`). Clients registered by the
/// hosted assistants themselves; authorization requests waiting for, or carrying, the user's
/// decision (sealed: an edit cannot approve one) and the one-time code minted from it; the grant
/// behind each remote token (sealed: which client and resource it was issued for); refresh
/// tokens, kept after rotation so that presenting a spent one can revoke its grant. Every
/// secret is stored as a keyed hash, like client tokens. `IF NOT EXISTS`: a database whose
/// version was put back (PC-02) still migrates.
const V15: &str = r#"
CREATE TABLE IF NOT EXISTS oauth_clients (
    id            TEXT PRIMARY KEY NOT NULL,
    name          TEXT NOT NULL,
    redirect_uris TEXT NOT NULL CHECK (json_type(redirect_uris) = 'array'),
    created_ms    INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS oauth_requests (
    id              TEXT PRIMARY KEY NOT NULL,
    client_id       TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    redirect_uri    TEXT NOT NULL,
    state           TEXT,
    code_challenge  TEXT NOT NULL,
    resource        TEXT NOT NULL,
    user_code       TEXT NOT NULL,
    created_ms      INTEGER NOT NULL,
    expires_ms      INTEGER NOT NULL,
    decision        TEXT NOT NULL DEFAULT 'pending'
        CHECK (decision IN ('pending', 'approved', 'denied')),
    decided_ms      INTEGER,
    code_hash       BLOB UNIQUE CHECK (code_hash IS NULL OR length(code_hash) = 32),
    code_expires_ms INTEGER,
    code_used_ms    INTEGER,
    token_id        TEXT,
    seal            BLOB CHECK (seal IS NULL OR length(seal) = 32)
) STRICT;
CREATE TABLE IF NOT EXISTS oauth_grants (
    token_id    TEXT PRIMARY KEY NOT NULL REFERENCES tokens (id) ON DELETE CASCADE,
    client_id   TEXT NOT NULL,
    client_name TEXT NOT NULL,
    resource    TEXT NOT NULL,
    seal        BLOB CHECK (seal IS NULL OR length(seal) = 32)
) STRICT;
CREATE TABLE IF NOT EXISTS oauth_refresh (
    hash       BLOB PRIMARY KEY NOT NULL CHECK (length(hash) = 32),
    token_id   TEXT NOT NULL REFERENCES tokens (id) ON DELETE CASCADE,
    expires_ms INTEGER NOT NULL,
    spent_ms   INTEGER
) STRICT, WITHOUT ROWID;
"#;

/// Version 16: each token's profile, the tools it offers (`sluice_core::Profile`). Tokens made
/// before are `full`, what every token was. Sealed as the tail of the token's seal (see
/// `sealed_table`), bound only when it is not `full`, so seals made before this step still
/// verify. Run by [`v16`], which adds the column only when it is missing, so a database whose
/// version was put back (PC-02) still migrates.
const V16: &str = r#"
ALTER TABLE tokens ADD COLUMN profile TEXT NOT NULL DEFAULT 'full'
    CHECK (profile IN ('review', 'edit', 'agent', 'full'));
"#;

/// The schema version that added each token's profile.
pub(crate) const PROFILE_SCHEMA: usize = 16;

fn v16(tx: &rusqlite::Transaction) -> rusqlite_migration::HookResult {
    let present: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_table_info('tokens') WHERE name = 'profile')",
        [],
        |r| r.get(0),
    )?;
    if !present {
        tx.execute_batch(V16)?;
    }
    Ok(())
}

/// Version 17: the ports a running job publishes, as `port:host_port` pairs separated by
/// commas (on the host's 127.0.0.1), so `sluice jobs` can name them; NULL once it ended. Run by
/// [`v17`], which adds the column only when it is missing (as [`v16`]).
const V17: &str = r#"
ALTER TABLE jobs ADD COLUMN ports TEXT;
"#;

fn v17(tx: &rusqlite::Transaction) -> rusqlite_migration::HookResult {
    let present: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_table_info('jobs') WHERE name = 'ports')",
        [],
        |r| r.get(0),
    )?;
    if !present {
        tx.execute_batch(V17)?;
    }
    Ok(())
}

/// Version 18: whether a project's git tools show the e-mail addresses of its history
/// (`sluice_core::GitEmails`), hidden unless the user chose otherwise. Sealed as the tail of the
/// project's seal (see `sealed_table`), bound only when it is not `hide`, so seals made before
/// this step still verify and an edit to `show` outside Sluice breaks the seal. Run by [`v18`],
/// which adds the column only when it is missing (as [`v16`]).
const V18: &str = r#"
ALTER TABLE projects ADD COLUMN git_emails TEXT NOT NULL DEFAULT 'hide'
    CHECK (git_emails IN ('hide', 'show'));
"#;

/// The schema version that added each project's git e-mail setting.
pub(crate) const GIT_EMAILS_SCHEMA: usize = 18;

fn v18(tx: &rusqlite::Transaction) -> rusqlite_migration::HookResult {
    let present: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_table_info('projects') WHERE name = 'git_emails')",
        [],
        |r| r.get(0),
    )?;
    if !present {
        tx.execute_batch(V18)?;
    }
    Ok(())
}

/// Version 19: the project a project is a linked worktree of (Sluice made the worktree with
/// `git_worktree` and authorized it), NULL for every other project. Sealed as the project seal's
/// second tail, bound only when not NULL, so seals made before this step still verify and
/// pointing a project at a parent outside Sluice breaks the seal. `Store::delete_project`
/// removes a parent's worktree projects with it. Run by [`v19`], which adds the column only when
/// it is missing (as [`v18`]).
const V19: &str = r#"
ALTER TABLE projects ADD COLUMN worktree_of TEXT REFERENCES projects (id);
"#;

/// The schema version that added each project's worktree parent.
pub(crate) const WORKTREE_SCHEMA: usize = 19;

fn v19(tx: &rusqlite::Transaction) -> rusqlite_migration::HookResult {
    let present: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_table_info('projects') WHERE name = 'worktree_of')",
        [],
        |r| r.get(0),
    )?;
    if !present {
        tx.execute_batch(V19)?;
    }
    Ok(())
}

/// Version 20: whether a project's git writes run its hooks (`sluice_core::GitHooks`), off
/// unless the user allowed them. Sealed as the project seal's third tail, bound only when not
/// `off` (as [`V18`]). Run by [`v20`], which adds the column only when it is missing.
const V20: &str = r#"
ALTER TABLE projects ADD COLUMN git_hooks TEXT NOT NULL DEFAULT 'off'
    CHECK (git_hooks IN ('off', 'sandbox'));
"#;

/// The schema version that added each project's git hooks setting.
pub(crate) const GIT_HOOKS_SCHEMA: usize = 20;

fn v20(tx: &rusqlite::Transaction) -> rusqlite_migration::HookResult {
    let present: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_table_info('projects') WHERE name = 'git_hooks')",
        [],
        |r| r.get(0),
    )?;
    if !present {
        tx.execute_batch(V20)?;
    }
    Ok(())
}

/// Every migration, oldest first.
pub(crate) fn migrations() -> Migrations<'static> {
    let steps = [V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11, V12, V13, V14, V15];
    let mut all: Vec<M<'static>> = steps.iter().map(|sql| M::up(sql)).collect();
    all.push(M::up_with_hook("", v16));
    all.push(M::up_with_hook("", v17));
    all.push(M::up_with_hook("", v18));
    all.push(M::up_with_hook("", v19));
    #[cfg(debug_assertions)]
    if std::env::var_os("SLUICE_FAILPOINT_STALL_MIGRATION").is_some() {
        all.push(M::up_with_hook("", |tx: &rusqlite::Transaction| {
            v20(tx)?;
            stall_in_migration(tx)
        }));
        return Migrations::new(all);
    }
    all.push(M::up_with_hook("", v20));
    Migrations::new(all)
}

/// Debug builds only: with `SLUICE_FAILPOINT_STALL_MIGRATION` set, the last migration stops for
/// good after its SQL ran, inside the still open migration transaction, and says so on stderr,
/// so an end-to-end test can kill the real process in the middle of a migration and check what
/// the next start makes of it (PC-03). Release builds do not contain it.
#[cfg(debug_assertions)]
fn stall_in_migration(_tx: &rusqlite::Transaction) -> rusqlite_migration::HookResult {
    eprintln!("failpoint: stalled inside the migration transaction");
    loop {
        std::thread::park();
    }
}

/// The schema version this build writes.
pub(crate) const LATEST: usize = 20;

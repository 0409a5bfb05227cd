//! A project's sandbox settings: the credential stores hidden from its jobs (the default list
//! with the user's additions and removals), stores granted, host sockets opted in, and whether
//! its jobs require full confinement. Only the human changes them (the CLI, the window after a
//! native confirmation); no MCP tool reaches them. [`Engine::sandbox_widening`] says, in the
//! words the confirmation shows, what a change would expose.

use std::path::{Path, PathBuf};

use serde::Serialize;
use sluice_core::{ErrorCode, Failure, HostPath, SandboxSettings};
use sluice_exec::{Exposure, Guarantee};
use sluice_store::Project;

use crate::{Engine, store_failure};

/// The most entries each of a project's sandbox lists holds.
pub const MAX_SANDBOX_ENTRIES: usize = 100;

/// The warning every opted-in socket carries (CLI, window, confirmation).
pub const SOCKET_WARNING: &str = "equivalent to full access to this machine: whatever listens on \
     a socket like this (Docker, a system service, an agent) can run anything or act for you";

/// The sandbox in force for one project, for `sluice project show`, the window and approvals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SandboxView {
    /// Jobs run in namespaces (else the Landlock and seccomp fallback, or nothing).
    pub namespaces: bool,
    /// Every layer holds here.
    pub full: bool,
    pub summary: String,
    pub guarantees: Vec<Guarantee>,
    /// What the project's jobs never read: defaults (minus un-hidden and granted) and additions.
    pub hidden: Vec<HiddenEntry>,
    /// Defaults this project un-hid.
    pub unhidden: Vec<HiddenEntry>,
    pub grants: Vec<HiddenEntry>,
    pub sockets: Vec<String>,
    pub require_full: bool,
    /// Why the project's jobs would be refused here, if they would.
    pub refusal: Option<String>,
}

/// One path of a project's sandbox lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HiddenEntry {
    pub path: String,
    /// What the store holds, for a default one.
    pub holds: Option<&'static str>,
    /// On the default list (else the user's own).
    pub default: bool,
    /// Exists on this machine.
    pub present: bool,
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_absolute())
}

/// The default credential stores, as shown to the user (`~/…` beneath the home), with what
/// each holds.
pub fn default_hidden() -> Vec<(HostPath, &'static str)> {
    let home = home();
    sluice_exec::hide::default_stores(home.as_deref())
        .into_iter()
        .filter_map(|(p, holds)| Some((HostPath::of_path(&p, home.as_deref())?, holds)))
        .collect()
}

/// What the store at `path` holds, in the words of the confirmation.
fn holds(path: &Path) -> Option<&'static str> {
    sluice_exec::hide::what_it_holds(path, home().as_deref())
}

/// The settings as the exec layer takes them: absolute paths.
pub(crate) fn exposure(settings: &SandboxSettings) -> Exposure {
    let home = home();
    let resolve =
        |v: &[HostPath]| v.iter().filter_map(|p| p.resolve(home.as_deref())).collect::<Vec<_>>();
    Exposure {
        hidden: resolve(&settings.hide),
        unhidden: resolve(&settings.unhide),
        granted: resolve(&settings.grants),
        sockets: resolve(&settings.sockets),
        require_full: settings.require_full,
    }
}

/// Why a project that requires full confinement would not run here.
pub(crate) fn refusal(settings: &SandboxSettings) -> Option<String> {
    let report = crate::job_confinement();
    (settings.require_full && !sluice_exec::is_full(&report)).then(|| {
        format!(
            "this project requires full confinement for its commands, but {}; nothing runs \
             until that changes or the user lifts the requirement in Sluice",
            report.summary
        )
    })
}

/// The sandbox in force for `project`'s jobs on this machine.
pub fn view(project: &Project) -> SandboxView {
    {
        let report = crate::job_confinement();
        let s = &project.sandbox;
        let home = home();
        let entry = |p: &HostPath, default: bool| {
            let real = p.resolve(home.as_deref());
            HiddenEntry {
                path: p.to_string(),
                holds: real.as_deref().and_then(holds),
                default,
                present: real.is_some_and(|r| std::fs::symlink_metadata(r).is_ok()),
            }
        };
        let mut hidden: Vec<HiddenEntry> = default_hidden()
            .into_iter()
            .filter(|(p, _)| !s.unhide.contains(p) && !s.grants.contains(p))
            .map(|(p, _)| entry(&p, true))
            .collect();
        hidden.extend(s.hide.iter().filter(|p| !s.grants.contains(p)).map(|p| entry(p, false)));
        SandboxView {
            namespaces: report.namespaces,
            full: sluice_exec::is_full(&report),
            summary: report.summary.clone(),
            guarantees: sluice_exec::guarantees(&report),
            hidden,
            unhidden: s.unhide.iter().map(|p| entry(p, true)).collect(),
            grants: s.grants.iter().map(|p| entry(p, false)).collect(),
            sockets: s.sockets.iter().map(ToString::to_string).collect(),
            require_full: s.require_full,
            refusal: refusal(s),
        }
    }
}

impl Engine {
    /// The sandbox in force for `project`'s jobs on this machine ([`view`]).
    pub fn sandbox_view(&self, project: &Project) -> SandboxView {
        view(project)
    }

    /// What a command in `handle`'s project will see of the files its shield hides, as a line
    /// of the approval card; `None` when it sees none of them. With the cover in force, the
    /// files granted to its commands; without it (Landlock alone, Windows), every one there is.
    pub fn shielded_in_view(&self, handle: &crate::ProjectHandle) -> Option<String> {
        const SHOWN: usize = 5;
        let root = handle.workspace.root().path();
        let project = self.find_project(handle.id.as_str()).ok()?;
        let granted = exposure(&project.sandbox).granted;
        let rel = |p: &Path| {
            let r = p.strip_prefix(root).unwrap_or(p).to_string_lossy().into_owned();
            sluice_core::text::visible(&r).into_owned()
        };
        let list = |names: Vec<String>| {
            let more = names.len().saturating_sub(SHOWN);
            let mut text = names.into_iter().take(SHOWN).collect::<Vec<_>>().join(", ");
            if more > 0 {
                text.push_str(&format!(" and {more} more"));
            }
            text
        };
        if sluice_exec::covers_shield(&crate::job_confinement()) {
            let shown: Vec<String> = granted
                .iter()
                .filter(|g| {
                    let inside = g.strip_prefix(root).ok().and_then(|r| r.to_str());
                    inside
                        .and_then(|r| sluice_guard::RelPath::parse(r).ok())
                        .is_some_and(|r| !r.is_root() && handle.workspace.shield().is_shielded(&r))
                })
                .filter(|g| std::fs::symlink_metadata(g).is_ok())
                .map(|g| rel(g))
                .collect();
            return (!shown.is_empty()).then(|| {
                format!(
                    "it can read files the shield hides from assistants, granted to the \
                     project's commands: {}",
                    list(shown)
                )
            });
        }
        let cover =
            sluice_exec::cover::ShieldCover { shield: handle.workspace.shield(), granted: &[] };
        let found = match sluice_exec::cover::covered(root, cover) {
            Ok(found) => found.iter().map(|c| rel(&c.path)).collect::<Vec<_>>(),
            Err(_) => vec!["(too many to list)".to_owned()],
        };
        (!found.is_empty()).then(|| {
            format!(
                "this system's sandbox cannot cover the files the shield hides: it can read {}",
                list(found)
            )
        })
    }

    /// Replaces a project's sandbox settings after checking every entry; a bad one changes
    /// nothing. Jobs started afterwards get them; running ones keep theirs.
    pub fn set_sandbox(
        &self,
        reference: &str,
        settings: SandboxSettings,
    ) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        let settings = self.check_sandbox(&p, settings)?;
        self.store.set_project_sandbox(&p.id, &settings).map_err(store_failure)?;
        self.after_change("project.sandbox", Some(&p.id));
        self.find_project(p.id.as_str())
    }

    /// What `next` would expose that the project's current settings do not, one sentence per
    /// entry, as the native confirmation says it; empty when nothing widens.
    pub fn sandbox_widening(
        &self,
        reference: &str,
        next: &SandboxSettings,
    ) -> Result<Vec<String>, Failure> {
        let p = self.find_project(reference)?;
        // A change that would be refused is refused before anyone is asked about it.
        let next = &self.check_sandbox(&p, next.clone())?;
        let now = &p.sandbox;
        let name = &p.name;
        let home = home();
        let mut out = Vec::new();
        for g in next.grants.iter().filter(|g| !now.grants.contains(g)) {
            let real = g.resolve(home.as_deref());
            let inside = real.as_deref().is_some_and(|r| r.starts_with(&p.root));
            let what = match real.as_deref().and_then(holds) {
                _ if inside => "inside the project, which its sensitive-file shield hides from \
                                assistants and otherwise from its commands"
                    .to_owned(),
                Some(h) => format!("which holds {h}"),
                None => "which is not on Sluice's list of credential stores (it may still hold \
                         secrets)"
                    .to_owned(),
            };
            out.push(format!(
                "Jobs of project {name} will be able to read {g}, {what}. Read-only; a command \
                 could print it, or with the network on send it elsewhere."
            ));
        }
        for u in next.unhide.iter().filter(|u| !now.unhide.contains(u)) {
            let what =
                u.resolve(home.as_deref()).as_deref().and_then(holds).unwrap_or("credentials");
            out.push(format!(
                "Jobs of project {name} will no longer have {u} ({what}) hidden where the \
                 sandbox would show it: without namespaces, or beneath a toolchain folder."
            ));
        }
        for s in next.sockets.iter().filter(|s| !now.sockets.contains(s)) {
            out.push(format!(
                "Jobs of project {name} will be able to connect to {s}. This is {SOCKET_WARNING}."
            ));
        }
        if now.require_full && !next.require_full {
            out.push(format!(
                "Jobs of project {name} will run under the fallback sandbox (Landlock and \
                 seccomp alone) where namespaces are unavailable, and fewer guarantees hold."
            ));
        }
        Ok(out)
    }

    fn check_sandbox(
        &self,
        project: &Project,
        mut s: SandboxSettings,
    ) -> Result<SandboxSettings, Failure> {
        for list in [&mut s.hide, &mut s.unhide, &mut s.grants, &mut s.sockets] {
            let mut seen = Vec::new();
            list.retain(|p| {
                let new = !seen.contains(p);
                seen.push(p.clone());
                new
            });
            if list.len() > MAX_SANDBOX_ENTRIES {
                return Err(Failure::invalid(format!(
                    "a sandbox list holds at most {MAX_SANDBOX_ENTRIES} entries"
                )));
            }
        }
        let home = home();
        let resolve = |p: &HostPath| {
            p.resolve(home.as_deref()).ok_or_else(|| {
                Failure::invalid(format!("{p} names your home, but Sluice does not know it"))
            })
        };
        let data = std::fs::canonicalize(&self.data_dir).unwrap_or_else(|_| self.data_dir.clone());
        let related = |a: &Path, b: &Path| a.starts_with(b) || b.starts_with(a);
        for h in &s.hide {
            if h.is_everything() {
                return Err(Failure::invalid(format!(
                    "hiding {h} would hide everything; turn the project's execution off instead"
                )));
            }
            if resolve(h)?.starts_with(&project.root) {
                return Err(Failure::invalid(format!(
                    "{h} is inside the project; hide it from assistants with the sensitive-file \
                     shield instead"
                )));
            }
        }
        let defaults = default_hidden();
        for u in &s.unhide {
            let Some((_, holds)) = defaults.iter().find(|(d, _)| d == u) else {
                return Err(Failure::invalid(format!(
                    "{u} is not on the default list of credential stores; only those can be \
                     un-hidden"
                )));
            };
            if *holds == "Sluice's own data" {
                return Err(Failure::new(
                    ErrorCode::Forbidden,
                    format!("{u} is where Sluice keeps its own data; it stays hidden"),
                ));
            }
            if s.hide.contains(u) {
                return Err(conflict(u, "hidden and un-hidden"));
            }
        }
        for g in &s.grants {
            if s.hide.contains(g) {
                return Err(conflict(g, "hidden and granted"));
            }
            let real = resolve(g)?;
            let meta = std::fs::symlink_metadata(&real).map_err(|_| {
                Failure::new(ErrorCode::NotFound, format!("nothing is at {g} to grant"))
            })?;
            let canonical = std::fs::canonicalize(&real).ok();
            if canonical.as_deref() != Some(real.as_path()) {
                let to = canonical
                    .and_then(|c| HostPath::of_path(&c, home.as_deref()))
                    .map(|c| format!(" (to {c})"))
                    .unwrap_or_default();
                return Err(Failure::new(
                    ErrorCode::Forbidden,
                    format!(
                        "{g} is reached through a symbolic link{to}; a grant names the file \
                         itself, so a link cannot later point it elsewhere. Grant the real path"
                    ),
                ));
            }
            if !meta.is_file() && !meta.is_dir() {
                return Err(Failure::new(
                    ErrorCode::WrongKind,
                    format!("{g} is neither a file nor a folder"),
                ));
            }
            let everything = g.is_everything()
                || home.as_deref().is_some_and(|h| h.starts_with(&real))
                || related(&real, &data)
                || project.root.starts_with(&real);
            if everything {
                return Err(Failure::new(
                    ErrorCode::Forbidden,
                    format!(
                        "{g} is your home, holds it or the project, or is Sluice's data folder; \
                         grant one store, not a folder around them"
                    ),
                ));
            }
        }
        for sock in &s.sockets {
            let real = resolve(sock)?;
            let meta = std::fs::metadata(&real).map_err(|_| {
                Failure::new(ErrorCode::NotFound, format!("no socket is at {sock}"))
            })?;
            #[cfg(unix)]
            let is_socket = std::os::unix::fs::FileTypeExt::is_socket(&meta.file_type());
            // No Unix sockets Sluice can grant off Unix.
            #[cfg(not(unix))]
            let is_socket = {
                let _ = meta;
                false
            };
            if !is_socket {
                return Err(Failure::new(
                    ErrorCode::WrongKind,
                    format!("{sock} is not a Unix socket"),
                ));
            }
        }
        Ok(s)
    }
}

fn conflict(p: &HostPath, what: &str) -> Failure {
    Failure::new(ErrorCode::Conflict, format!("{p} cannot be both {what}"))
}

#[cfg(all(test, unix))]
mod tests {
    use sluice_core::{AccessMode, Coded, ExecMode};

    use super::*;
    use crate::{EngineConfig, SecretPreference};

    fn demo() -> (tempfile::TempDir, Engine, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("proj")).unwrap();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        let config = EngineConfig::new(root.join("data"), SecretPreference::FileOnly);
        let engine = Engine::open(&config).unwrap();
        engine
            .add_project(&root.join("proj"), Some("demo"), AccessMode::ReadWrite, ExecMode::Any)
            .unwrap();
        (tmp, engine, root)
    }

    fn path(p: &Path) -> HostPath {
        HostPath::parse(p.to_str().unwrap()).unwrap()
    }

    #[test]
    fn bad_sandbox_settings_are_refused_with_a_code_and_change_nothing() {
        let (_tmp, engine, root) = demo();
        let out = root.join("outside");
        std::fs::write(out.join("token"), "t").unwrap();
        std::os::unix::fs::symlink(out.join("token"), out.join("link")).unwrap();
        let sock = std::os::unix::net::UnixListener::bind(out.join("s.sock")).unwrap();
        let cases: Vec<(SandboxSettings, ErrorCode)> = vec![
            (
                SandboxSettings { hide: vec![path(Path::new("/"))], ..Default::default() },
                ErrorCode::InvalidArgument,
            ),
            (
                SandboxSettings { hide: vec![path(&root.join("proj/x"))], ..Default::default() },
                ErrorCode::InvalidArgument,
            ),
            (
                SandboxSettings { unhide: vec![path(&out)], ..Default::default() },
                ErrorCode::InvalidArgument,
            ),
            (
                SandboxSettings {
                    unhide: vec![HostPath::parse("~/.config/sluice").unwrap()],
                    ..Default::default()
                },
                ErrorCode::Forbidden,
            ),
            (
                SandboxSettings { grants: vec![path(&out.join("missing"))], ..Default::default() },
                ErrorCode::NotFound,
            ),
            (
                SandboxSettings { grants: vec![path(&out.join("link"))], ..Default::default() },
                ErrorCode::Forbidden,
            ),
            (
                SandboxSettings { grants: vec![path(&root)], ..Default::default() },
                ErrorCode::Forbidden,
            ),
            (
                SandboxSettings { grants: vec![path(&root.join("data"))], ..Default::default() },
                ErrorCode::Forbidden,
            ),
            (
                SandboxSettings { grants: vec![path(&out.join("s.sock"))], ..Default::default() },
                ErrorCode::WrongKind,
            ),
            (
                SandboxSettings {
                    grants: vec![HostPath::parse("~").unwrap()],
                    ..Default::default()
                },
                ErrorCode::Forbidden,
            ),
            (
                SandboxSettings { sockets: vec![path(&out.join("token"))], ..Default::default() },
                ErrorCode::WrongKind,
            ),
            (
                SandboxSettings {
                    sockets: vec![path(&out.join("nothing.sock"))],
                    ..Default::default()
                },
                ErrorCode::NotFound,
            ),
            (
                SandboxSettings {
                    hide: vec![path(&out.join("token"))],
                    grants: vec![path(&out.join("token"))],
                    ..Default::default()
                },
                ErrorCode::Conflict,
            ),
            (
                SandboxSettings {
                    hide: vec![path(&out); MAX_SANDBOX_ENTRIES + 1]
                        .into_iter()
                        .enumerate()
                        .map(|(i, _)| path(&out.join(i.to_string())))
                        .collect(),
                    ..Default::default()
                },
                ErrorCode::InvalidArgument,
            ),
        ];
        for (bad, code) in cases {
            let err = engine.set_sandbox("demo", bad.clone()).unwrap_err();
            assert_eq!(err.code(), code, "{bad:?}: {err}");
            assert!(!err.message.is_empty());
            assert_eq!(engine.find_project("demo").unwrap().sandbox, SandboxSettings::default());
        }
        let err = engine.set_sandbox("nope", SandboxSettings::default()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::ProjectNotFound, "{err}");

        let good = SandboxSettings {
            hide: vec![path(&out.join("mine")), path(&out.join("mine"))],
            grants: vec![path(&out.join("token"))],
            sockets: vec![path(&out.join("s.sock"))],
            require_full: true,
            ..Default::default()
        };
        let p = engine.set_sandbox("demo", good).unwrap();
        assert_eq!(p.sandbox.hide.len(), 1, "duplicates dropped");
        let exposure = exposure(&p.sandbox);
        assert_eq!(exposure.granted, vec![out.join("token")]);
        assert_eq!(exposure.sockets, vec![out.join("s.sock")]);
        assert!(exposure.require_full);
        drop(sock);
    }

    #[test]
    fn widening_says_exactly_what_a_change_exposes() {
        let (_tmp, engine, root) = demo();
        let out = root.join("outside");
        std::fs::write(out.join("x"), "t").unwrap();
        let _sock = std::os::unix::net::UnixListener::bind(out.join("docker.sock")).unwrap();
        let next = SandboxSettings {
            grants: vec![path(&out.join("x"))],
            unhide: vec![HostPath::parse("~/.aws").unwrap()],
            sockets: vec![path(&out.join("docker.sock"))],
            hide: vec![HostPath::parse("~/.config/foo").unwrap()],
            require_full: false,
        };
        let lines = engine.sandbox_widening("demo", &next).unwrap();
        assert_eq!(lines.len(), 3, "{lines:#?}");
        assert_eq!(
            lines[0],
            format!(
                "Jobs of project demo will be able to read {}, which is not on Sluice's list of \
                 credential stores (it may still hold secrets). Read-only; a command could \
                 print it, or with the network on send it elsewhere.",
                out.join("x").display()
            )
        );
        assert!(lines[1].contains("~/.aws (AWS credentials) hidden"), "{lines:#?}");
        assert!(
            lines[2].contains("docker.sock. This is equivalent to full access to this machine")
        );
        // A default store says what it holds (the CLI's tests show the whole sentence).
        let holds = sluice_exec::hide::what_it_holds(
            Path::new("/home/u/.npmrc"),
            Some(Path::new("/home/u")),
        );
        assert_eq!(holds, Some("npm registry tokens"));
        // A change that would be refused is refused before the question.
        let bad = SandboxSettings { grants: vec![path(&out.join("none"))], ..Default::default() };
        assert_eq!(engine.sandbox_widening("demo", &bad).unwrap_err().code(), ErrorCode::NotFound);
        // Hiding more, or asking for full confinement, widens nothing.
        let narrower =
            SandboxSettings { hide: next.hide.clone(), require_full: true, ..Default::default() };
        assert!(engine.sandbox_widening("demo", &narrower).unwrap().is_empty());
        engine.set_sandbox("demo", narrower).unwrap();
        let lines = engine.sandbox_widening("demo", &SandboxSettings::default()).unwrap();
        assert!(lines[0].contains("fallback sandbox"), "{lines:#?}");
    }

    #[test]
    fn a_shielded_file_granted_to_commands_is_named_in_the_question_and_on_the_approval() {
        let (_tmp, engine, root) = demo();
        let (_, token) = engine.create_token("Cursor", None, None).unwrap();
        let caller = engine.authenticate(&token).unwrap();
        let env = root.join("proj/.env");
        std::fs::write(&env, "SECRET=1").unwrap();
        std::fs::write(root.join("proj/notes.txt"), "x").unwrap();
        let h = engine.project(&caller, "demo").unwrap();
        // Nothing granted: a command sees none of them where the cover holds; all where not.
        let line = engine.shielded_in_view(&h);
        if sluice_exec::covers_shield(&crate::job_confinement()) {
            assert_eq!(line, None);
        } else {
            assert!(
                line.unwrap().contains("cannot cover the files the shield hides: it can read .env")
            );
        }
        let next = SandboxSettings {
            grants: vec![path(&env), path(&root.join("proj/notes.txt"))],
            ..Default::default()
        };
        let lines = engine.sandbox_widening("demo", &next).unwrap();
        assert!(
            lines[0].ends_with(
                "/proj/.env, inside the project, which its sensitive-file shield hides from \
                 assistants and otherwise from its commands. Read-only; a command could print \
                 it, or with the network on send it elsewhere."
            ),
            "{lines:#?}"
        );
        engine.set_sandbox("demo", next).unwrap();
        let h = engine.project(&caller, "demo").unwrap();
        let line = engine.shielded_in_view(&h).unwrap();
        if sluice_exec::covers_shield(&crate::job_confinement()) {
            // Only the shielded one is named: notes.txt was never hidden.
            assert_eq!(
                line,
                "it can read files the shield hides from assistants, granted to the project's \
                 commands: .env"
            );
        }
    }

    #[test]
    fn the_view_lists_the_hidden_stores_grants_and_guarantees_in_force() {
        let (_tmp, engine, root) = demo();
        std::fs::write(root.join("outside/token"), "t").unwrap();
        let settings = SandboxSettings {
            hide: vec![path(&root.join("outside/mine"))],
            grants: vec![path(&root.join("outside/token"))],
            unhide: vec![HostPath::parse("~/.gitconfig").unwrap()],
            ..Default::default()
        };
        let p = engine.set_sandbox("demo", settings).unwrap();
        let view = engine.sandbox_view(&p);
        #[cfg(target_os = "linux")]
        assert_eq!(view.namespaces, sluice_exec::jail_status().available);
        #[cfg(not(target_os = "linux"))]
        assert!(!view.namespaces);
        assert!(
            view.hidden
                .iter()
                .any(|h| h.path == "~/.ssh" && h.default && h.holds == Some("SSH keys"))
        );
        assert!(view.hidden.iter().any(|h| h.path.ends_with("outside/mine") && !h.default));
        assert!(!view.hidden.iter().any(|h| h.path == "~/.gitconfig"));
        assert_eq!(view.unhidden[0].path, "~/.gitconfig");
        assert!(view.grants[0].present);
        assert!(!view.guarantees.is_empty());
        assert_eq!(view.refusal, None);
    }
}

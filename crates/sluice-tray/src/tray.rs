//! The tray: the state line, "Approvals (N)" with Approve / Deny per waiting approval, "Jobs (N
//! running)" with Cancel per job, "Connection requests (N)" with each hosted assistant's code
//! and Approve / Deny, "Undo a command's changes" for the newest commands that took a checkpoint
//! (a native question, then the project's files put back), Pause / Resume, Emergency stop, Open
//! Sluice…, Quit — rebuilt
//! from engine state whenever it changes. An approval, a runaway job and the kill switch are
//! each at most two clicks from the tray icon and need no window.

use anyhow::{Context as _, Result};
use muda::{IsMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use serde_json::json;
use sluice_engine::Engine;
use sluice_ipc::{self as ipc, ApprovalDto, DecidedFrom, JobDto, JobStateDto, Verdict};
use tray_icon::{Icon, MouseButton, MouseButtonState, TrayIcon, TrayIconBuilder, TrayIconEvent};

use crate::App;

const ICON_ACTIVE: &[u8] = include_bytes!("../../../icons/tray-active.png");
const ICON_PAUSED: &[u8] = include_bytes!("../../../icons/tray-paused.png");
// The same glyphs with a red dot: approvals are waiting.
const ICON_ACTIVE_WAITING: &[u8] = include_bytes!("../../../icons/tray-active-waiting.png");
const ICON_PAUSED_WAITING: &[u8] = include_bytes!("../../../icons/tray-paused-waiting.png");
const ICON_STOPPED: &[u8] = include_bytes!("../../../icons/tray-stopped.png");
const ICON_STOPPED_WAITING: &[u8] = include_bytes!("../../../icons/tray-stopped-waiting.png");

/// How many commands the tray offers to undo.
const UNDOABLE: usize = 5;

/// What the tray shows.
struct View {
    paused: bool,
    stopped: bool,
    pending: Vec<ApprovalDto>,
    running: Vec<JobDto>,
    /// How many records in the database were changed outside Sluice (integrity findings).
    findings: usize,
    /// Hosted assistants asking to connect through the tunnel (reach from the web).
    requests: Vec<sluice_engine::OAuthRequest>,
    /// The newest checkpoints taken before commands: what the user can undo from here.
    undoable: Vec<ipc::CommandCheckpoint>,
}

impl View {
    fn of(engine: &Engine) -> View {
        let mut running = ipc::list_jobs(engine).unwrap_or_default();
        running.retain(|j| j.state == JobStateDto::Running);
        View {
            paused: engine.is_paused().unwrap_or(false),
            // Unknown counts as stopped: the menu then offers Resume, never a silent "on".
            stopped: engine.is_stopped().unwrap_or(true),
            pending: ipc::pending_approvals(engine).unwrap_or_else(|e| {
                tracing::warn!(code = %e.code, "cannot list approvals for the tray");
                Vec::new()
            }),
            running,
            findings: engine.integrity().map_or(0, |f| f.len()),
            requests: engine.oauth_requests().unwrap_or_else(|e| {
                tracing::warn!(code = %e.code, "cannot list connection requests for the tray");
                Vec::new()
            }),
            undoable: ipc::recent_command_checkpoints(engine, UNDOABLE),
        }
    }

    fn icon(&self) -> Result<Icon> {
        png_icon(self.icon_png())
    }

    fn icon_png(&self) -> &'static [u8] {
        let waiting = !self.pending.is_empty() || !self.requests.is_empty();
        match (self.stopped, self.paused, waiting) {
            (true, _, false) => ICON_STOPPED,
            (true, _, true) => ICON_STOPPED_WAITING,
            (false, false, false) => ICON_ACTIVE,
            (false, true, false) => ICON_PAUSED,
            (false, false, true) => ICON_ACTIVE_WAITING,
            (false, true, true) => ICON_PAUSED_WAITING,
        }
    }

    fn tooltip(&self) -> String {
        let mut s = (if self.stopped {
            "Sluice — AI access stopped"
        } else if self.paused {
            "Sluice — AI access paused"
        } else {
            "Sluice — AI access on"
        })
        .to_owned();
        match self.pending.len() {
            0 => {}
            1 => s.push_str(" · 1 approval waiting"),
            n => s.push_str(&format!(" · {n} approvals waiting")),
        }
        match self.requests.len() {
            0 => {}
            1 => s.push_str(" · 1 assistant asks to connect"),
            n => s.push_str(&format!(" · {n} assistants ask to connect")),
        }
        match self.running.len() {
            0 => {}
            1 => s.push_str(" · 1 job running"),
            n => s.push_str(&format!(" · {n} jobs running")),
        }
        match self.findings {
            0 => {}
            1 => s.push_str(" · 1 change made outside Sluice"),
            n => s.push_str(&format!(" · {n} changes made outside Sluice")),
        }
        s
    }
}

/// Menu labels treat `&` as a mnemonic marker; engine text must show it as itself.
fn label(text: &str) -> String {
    text.replace('&', "&&")
}

fn approvals_menu(view: &View) -> Result<Submenu> {
    let mut entries = Vec::new();
    for a in &view.pending {
        // Approving while AI access is paused is refused by the engine: say why, disabled.
        let approving = |id: String, text: &str| {
            if view.paused {
                MenuItem::with_id(id, format!("{text} (resume AI access first)"), false, None)
            } else {
                MenuItem::with_id(id, text, true, None)
            }
        };
        let (once, always) = if a.always_allowable {
            let always = approving(format!("always:{}", a.id), "Always allow this command");
            (approving(format!("approve:{}", a.id), "Approve once"), Some(always))
        } else {
            (approving(format!("approve:{}", a.id), "Approve"), None)
        };
        let deny = MenuItem::with_id(format!("deny:{}", a.id), "Deny", true, None);
        let details = MenuItem::with_id("show-approvals", "Details in Sluice…", true, None);
        // What runs on its own comes first, where the eye lands before Approve: disabled
        // items, text only.
        let warnings: Vec<MenuItem> = a
            .autorun_lines()
            .iter()
            .map(|line| MenuItem::new(label(&format!("⚠ {line}")), false, None))
            .collect();
        // Then its risk class, the same words as the window's card and the audit log.
        let risk = a.risk.as_ref().map(|r| MenuItem::new(label(&r.class), false, None));
        let mut items: Vec<&dyn IsMenuItem> =
            warnings.iter().map(|w| w as &dyn IsMenuItem).collect();
        if let Some(risk) = &risk {
            items.push(risk);
        }
        items.push(&once);
        if let Some(always) = &always {
            items.push(always);
        }
        items.extend([&deny as &dyn IsMenuItem, &details]);
        entries.push(Submenu::with_id_and_items(
            format!("approval:{}", a.id),
            label(&a.headline()),
            true,
            &items,
        )?);
    }
    let items: Vec<&dyn IsMenuItem> = entries.iter().map(|e| e as &dyn IsMenuItem).collect();
    Ok(Submenu::with_id_and_items(
        "approvals",
        format!("Approvals ({})", view.pending.len()),
        true,
        &items,
    )?)
}

/// "Claude asks to connect" per request from a hosted assistant: its code (which the person
/// compares with the one their browser shows), where it returns, Approve and Deny.
fn requests_menu(view: &View) -> Result<Submenu> {
    let mut entries = Vec::new();
    for r in &view.requests {
        let code = MenuItem::new(
            label(&format!("Code {} — approve only if your browser shows it", r.user_code)),
            false,
            None,
        );
        let back = MenuItem::new(
            label(&format!("Returns to {}", ipc::visible(r.redirect_host()))),
            false,
            None,
        );
        let approve = MenuItem::with_id(format!("reach-approve:{}", r.id), "Approve", true, None);
        let deny = MenuItem::with_id(format!("reach-deny:{}", r.id), "Deny", true, None);
        entries.push(Submenu::with_id_and_items(
            format!("request:{}", r.id),
            // A registered name is only a claim: the label says so (a verified client names the
            // host of its metadata document).
            label(&format!(
                "{} asks to connect",
                ipc::visible(
                    &sluice_engine::reach::ClientIdentity::of(&r.client_id, &r.client_name).label()
                )
            )),
            true,
            &[&code, &back, &approve, &deny],
        )?);
    }
    let items: Vec<&dyn IsMenuItem> = entries.iter().map(|e| e as &dyn IsMenuItem).collect();
    Ok(Submenu::with_id_and_items(
        "requests",
        format!("Connection requests ({})", view.requests.len()),
        true,
        &items,
    )?)
}

/// "cargo test · my-app · 1:23" per running job, each with Cancel.
fn jobs_menu(view: &View) -> Result<Submenu> {
    let mut entries = Vec::new();
    for j in &view.running {
        let cancel = MenuItem::with_id(format!("cancel:{}", j.id), "Cancel", true, None);
        let details = MenuItem::with_id("show-jobs", "Details in Sluice…", true, None);
        let secs = j.runtime_ms.unwrap_or(0) / 1000;
        let project = j.project_name.as_deref().unwrap_or("?");
        let line = format!("{} · {project} · {}:{:02}", j.command, secs / 60, secs % 60);
        entries.push(Submenu::with_id_and_items(
            format!("job:{}", j.id),
            label(&ipc::visible(&line)),
            true,
            &[&cancel, &details],
        )?);
    }
    let items: Vec<&dyn IsMenuItem> = entries.iter().map(|e| e as &dyn IsMenuItem).collect();
    Ok(Submenu::with_id_and_items(
        "jobs",
        format!("Jobs ({} running)", view.running.len()),
        true,
        &items,
    )?)
}

/// "Undo what `cargo fmt` changed · my-app · 14:02 UTC" per recent command: a click asks
/// natively, then puts the project's files back as they were before it (itself undoable).
fn undo_menu(view: &View) -> Result<Submenu> {
    let entries: Vec<MenuItem> = view
        .undoable
        .iter()
        .map(|c| {
            let time = c.created.get(11..16).unwrap_or("");
            let line =
                format!("Undo what `{}` changed · {} · {time} UTC", c.command, c.project_name);
            MenuItem::with_id(
                format!("undo-command:{}:{}", c.project_id, c.id),
                label(&ipc::visible(&line)),
                true,
                None,
            )
        })
        .collect();
    let items: Vec<&dyn IsMenuItem> = entries.iter().map(|e| e as &dyn IsMenuItem).collect();
    Ok(Submenu::with_id_and_items("undo", "Undo a command's changes", true, &items)?)
}

fn menu(view: &View) -> Result<Menu> {
    let paused = view.paused;
    let state = MenuItem::with_id(
        "state",
        if view.stopped {
            "⛔ Stopped — resume to allow AI access"
        } else if paused {
            "⏸ Paused — resume to allow AI access"
        } else {
            "● AI access on"
        },
        false,
        None,
    );
    let stop = MenuItem::with_id(
        "emergency-stop",
        "Emergency stop (kills every job, denies approvals)",
        !view.stopped,
        None,
    );
    let toggle = MenuItem::with_id(
        if paused { "resume" } else { "pause" },
        if paused { "Resume AI access" } else { "Pause AI access" },
        true,
        None,
    );
    // Informational, like the state line: the window names each finding.
    let integrity = (view.findings > 0).then(|| {
        MenuItem::with_id(
            "integrity",
            format!(
                "⚠ {} changed outside Sluice — see Open Sluice…",
                match view.findings {
                    1 => "1 record".to_owned(),
                    n => format!("{n} records"),
                }
            ),
            false,
            None,
        )
    });
    let open = MenuItem::with_id("open", "Open Sluice…", true, None);
    let quit = MenuItem::with_id("quit", "Quit Sluice", true, None);
    let sep = PredefinedMenuItem::separator;
    let (s1, s2, s3) = (sep(), sep(), sep());
    let approvals = if view.pending.is_empty() { None } else { Some(approvals_menu(view)?) };
    let requests = if view.requests.is_empty() { None } else { Some(requests_menu(view)?) };
    let jobs = if view.running.is_empty() { None } else { Some(jobs_menu(view)?) };
    let undo = if view.undoable.is_empty() { None } else { Some(undo_menu(view)?) };
    let mut items: Vec<&dyn IsMenuItem> = vec![&state];
    if let Some(i) = &integrity {
        items.push(i);
    }
    items.push(&s1);
    if let Some(a) = &approvals {
        items.push(a);
    }
    if let Some(r) = &requests {
        items.push(r);
    }
    if let Some(j) = &jobs {
        items.push(j);
    }
    if let Some(u) = &undo {
        items.push(u);
    }
    if approvals.is_some() || requests.is_some() || jobs.is_some() || undo.is_some() {
        items.push(&s2);
    }
    items.push(&toggle);
    items.push(&stop);
    items.push(&s3);
    items.push(&open);
    items.push(&quit);
    Ok(Menu::with_items(&items)?)
}

/// A click on a menu entry (on the main thread).
pub fn on_menu(app: &App, id: &str) {
    let decision = [
        ("approve:", Verdict::Approve),
        ("always:", Verdict::ApproveAlways),
        ("deny:", Verdict::Deny),
    ]
    .into_iter()
    .find_map(|(prefix, verdict)| Some((id.strip_prefix(prefix)?, verdict)));
    match (id, decision) {
        (_, Some((approval, verdict))) => {
            if let Err(e) =
                ipc::decide_approval(app.engine(), approval, verdict, None, DecidedFrom::Tray)
            {
                tracing::warn!(code = %e.code, "cannot decide an approval from the tray");
                crate::native::notify(app, "Sluice could not do that", &e.message);
            }
            // Decided meanwhile or expired: the menu was stale, so redraw it either way.
            app.refresh_tray();
        }
        _ if id.starts_with("reach-approve:") || id.starts_with("reach-deny:") => {
            let (request, approve) = match id.strip_prefix("reach-approve:") {
                Some(request) => (request, true),
                None => (&id["reach-deny:".len()..], false),
            };
            if let Err(f) = app.engine().decide_oauth_request(request, approve) {
                tracing::warn!(code = %f.code, "cannot decide a connection request from the tray");
                crate::native::notify(app, "Sluice could not do that", &f.message);
            }
            app.refresh_tray();
        }
        _ if id.starts_with("cancel:") => {
            let (app, job) = (app.clone(), id["cancel:".len()..].to_owned());
            // Killing a tree waits for it to die: not on the UI thread.
            std::thread::spawn(move || {
                if let Err(e) = ipc::cancel_job(app.engine(), &job) {
                    tracing::warn!(code = %e.code, "cannot cancel a job from the tray");
                }
                app.refresh_tray();
            });
        }
        _ if id.starts_with("undo-command:") => {
            let Some((project, checkpoint)) = id["undo-command:".len()..].split_once(':') else {
                return;
            };
            let (app, args) = (app.clone(), json!({"project": project, "id": checkpoint}));
            // The same command as the window's: it asks natively, off the main thread.
            std::thread::spawn(move || {
                match crate::window::call(&app, "restore_checkpoint", args) {
                    Ok(_) => crate::native::notify(
                        &app,
                        "Sluice restored the project",
                        "The files are back as they were before the command. Restoring can \
                         itself be undone from the project's checkpoints.",
                    ),
                    Err(e) if e.code == "denied" => {}
                    Err(e) => {
                        tracing::warn!(code = %e.code, "cannot undo a command from the tray");
                        crate::native::notify(&app, "Sluice could not undo that", &e.message);
                    }
                }
                app.refresh_tray();
            });
        }
        ("emergency-stop", _) => {
            let app = app.clone();
            std::thread::spawn(move || {
                if let Err(f) = app.engine().emergency_stop() {
                    tracing::error!(code = %f.code, "cannot stop from the tray");
                    crate::native::notify(&app, "Sluice could not stop", &f.message);
                }
                app.refresh_tray();
            });
        }
        ("resume", _) if app.engine().is_stopped().unwrap_or(true) => confirm_resume(app),
        ("pause" | "resume", _) => set_paused(app, id == "pause"),
        ("show-approvals", _) => app.show(Some("approvals")),
        ("show-jobs", _) => app.show(Some("jobs")),
        ("open", _) => app.show(None),
        ("quit", _) => app.quit(),
        _ => {}
    }
}

fn set_paused(app: &App, paused: bool) {
    if let Err(f) = app.engine().set_paused(paused) {
        tracing::error!(code = %f.code, "cannot change AI access from the tray");
        crate::native::notify(app, "Sluice could not do that", &f.message);
    }
    app.refresh_tray();
}

/// After an emergency stop, resuming asks first, as the window does: a native dialog, since the
/// tray has no page to show it in.
fn confirm_resume(app: &App) {
    let handle = app.clone();
    crate::native::ask(
        app,
        "Sluice is stopped: every AI request is refused and jobs were killed. Resume AI access? \
         Assistants can call Sluice again; nothing that was stopped restarts."
            .into(),
        "Resume AI access?",
        "Resume",
        "Stay stopped",
        move |resume| {
            if resume {
                set_paused(&handle, false);
            }
        },
    );
}

/// Creates the tray icon (on the main thread, once the event loop runs).
pub fn create(app: &App) -> Result<TrayIcon> {
    let view = View::of(app.engine());
    Ok(TrayIconBuilder::new()
        .with_id("sluice")
        .with_icon(view.icon()?)
        .with_tooltip(view.tooltip())
        .with_menu(Box::new(menu(&view)?))
        .with_menu_on_left_click(true)
        .build()?)
}

/// A click on the icon itself: a double click, or a middle click, opens the window (a left
/// click opens the menu).
pub fn on_icon(app: &App, event: TrayIconEvent) {
    if let TrayIconEvent::DoubleClick { button: MouseButton::Left, .. }
    | TrayIconEvent::Click {
        button: MouseButton::Middle,
        button_state: MouseButtonState::Up,
        ..
    } = event
    {
        app.show(None);
    }
}

/// Redraws the tray from the engine's state (access, waiting approvals, running jobs).
pub fn refresh(app: &App, tray: &TrayIcon) {
    let view = View::of(app.engine());
    let result = (|| -> Result<()> {
        tray.set_icon(Some(view.icon()?))?;
        tray.set_tooltip(Some(view.tooltip()))?;
        tray.set_menu(Some(Box::new(menu(&view)?)));
        Ok(())
    })();
    if let Err(err) = result {
        tracing::warn!(%err, "cannot update the tray");
    }
}

/// A PNG (the tray's icons, embedded) as the RGBA pixels the tray takes.
fn png_icon(bytes: &[u8]) -> Result<Icon> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(
        png::Transformations::normalize_to_color8() | png::Transformations::ALPHA,
    );
    let mut reader = decoder.read_info()?;
    let mut rgba = vec![0; reader.output_buffer_size().context("icon too large")?];
    let frame = reader.next_frame(&mut rgba)?;
    rgba.truncate(frame.buffer_size());
    anyhow::ensure!(frame.color_type == png::ColorType::Rgba, "icon is not RGBA");
    Ok(Icon::from_rgba(rgba, frame.width, frame.height)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(n: usize) -> Vec<ApprovalDto> {
        (0..n)
            .map(|i| ApprovalDto {
                id: format!("apr_{i}"),
                project_id: "proj_a".into(),
                project_name: "my-app".into(),
                token_id: "tok_a".into(),
                token_label: "Cursor".into(),
                tool: "delete_path".into(),
                summary: "delete a.txt (1 B, restorable)".into(),
                autorun: vec![],
                created_ms: 0,
                expires_ms: 1,
                status: sluice_ipc::ApprovalStatus::Pending,
                reason: None,
                decided_ms: None,
                decided_by: None,
                always_allowable: false,
                command: None,
                risk: None,
            })
            .collect()
    }

    fn request() -> sluice_engine::OAuthRequest {
        sluice_engine::OAuthRequest {
            id: "slrq_a".into(),
            client_id: "slcl_a".into(),
            client_name: "Claude &Co".into(),
            redirect_uri: "https://claude.ai/api/mcp/auth_callback".into(),
            state: None,
            code_challenge: String::new(),
            resource: "https://h.example/mcp".into(),
            user_code: "ABCD-EFGH".into(),
            created_ms: 0,
            expires_ms: 1,
            decision: sluice_engine::OAuthDecision::Pending,
            decided_ms: None,
            code_minted: false,
            tampered: false,
        }
    }

    #[test]
    fn tooltip_and_icon_count_waiting_approvals() {
        let v = |paused, n| View {
            paused,
            stopped: false,
            pending: pending(n),
            running: vec![],
            findings: 0,
            requests: vec![],
            undoable: vec![],
        };
        assert_eq!(v(false, 0).tooltip(), "Sluice — AI access on");
        assert_eq!(v(false, 1).tooltip(), "Sluice — AI access on · 1 approval waiting");
        assert_eq!(v(true, 3).tooltip(), "Sluice — AI access paused · 3 approvals waiting");
        for (paused, n) in [(false, 0), (true, 0), (false, 2), (true, 2)] {
            assert!(v(paused, n).icon().is_ok());
        }
        let stopped = View { paused: true, stopped: true, ..v(false, 1) };
        assert_eq!(stopped.tooltip(), "Sluice — AI access stopped · 1 approval waiting");
        let tampered = View { findings: 2, ..v(false, 0) };
        assert_eq!(tampered.tooltip(), "Sluice — AI access on · 2 changes made outside Sluice");
        assert!(stopped.icon().is_ok());
        let asking = View { requests: vec![request()], ..v(false, 0) };
        assert_eq!(asking.tooltip(), "Sluice — AI access on · 1 assistant asks to connect");
        assert_eq!(asking.icon_png(), ICON_ACTIVE_WAITING, "a request waits too");
        let menu = requests_menu(&asking).unwrap();
        assert_eq!(menu.text(), "Connection requests (1)");
        let items = menu.items();
        let entry = items[0].as_submenu().unwrap();
        assert_eq!(entry.text(), "\u{201C}Claude &&Co\u{201D} (unverified name) asks to connect");
        let texts: Vec<String> = entry
            .items()
            .iter()
            .map(|i| i.as_menuitem().map(|m| m.text()).unwrap_or_default())
            .collect();
        assert_eq!(
            texts,
            [
                "Code ABCD-EFGH — approve only if your browser shows it",
                "Returns to claude.ai",
                "Approve",
                "Deny"
            ]
        );
        // Only a client named by its fetched metadata document reads as verified; a registered
        // one borrowing its look does not.
        let verified = sluice_engine::OAuthRequest {
            client_id: "https://claude.ai/oauth/client.json".into(),
            client_name: "Claude (claude.ai)".into(),
            ..request()
        };
        let borrowed =
            sluice_engine::OAuthRequest { client_name: "Claude (claude.ai)".into(), ..request() };
        let shown = |r| {
            let menu = requests_menu(&View { requests: vec![r], ..v(false, 0) }).unwrap();
            menu.items()[0].as_submenu().unwrap().text()
        };
        assert_eq!(shown(verified), "Claude (verified: claude.ai) asks to connect");
        assert_eq!(
            shown(borrowed),
            "\u{201C}Claude (claude.ai)\u{201D} (unverified name) asks to connect"
        );
        let icons = [
            ICON_ACTIVE,
            ICON_ACTIVE_WAITING,
            ICON_PAUSED,
            ICON_PAUSED_WAITING,
            ICON_STOPPED,
            ICON_STOPPED_WAITING,
        ];
        for (i, a) in icons.iter().enumerate() {
            assert!(icons[i + 1..].iter().all(|b| a != b), "every state has its own icon");
        }
    }

    #[test]
    fn the_undo_menu_names_each_command_its_project_and_time() {
        let view = View {
            paused: false,
            stopped: false,
            pending: vec![],
            running: vec![],
            findings: 0,
            requests: vec![],
            undoable: vec![ipc::CommandCheckpoint {
                project_id: "proj_aaaaaaaaaaaaaaaa".into(),
                project_name: "R&D\u{202E}app".into(),
                id: "ckpt_bbbbbbbbbbbbbbbb".into(),
                command: "cargo fmt".into(),
                created: "2026-12-04T14:02:59Z".into(),
            }],
        };
        let sub = undo_menu(&view).unwrap();
        assert_eq!(sub.text(), "Undo a command's changes");
        let items = sub.items();
        let entry = items[0].as_menuitem().unwrap();
        // A control character in a name is shown, not obeyed; `&` is itself.
        assert_eq!(entry.text(), "Undo what `cargo fmt` changed · R&&D⟨U+202E⟩app · 14:02 UTC");
        assert_eq!(entry.id().0, "undo-command:proj_aaaaaaaaaaaaaaaa:ckpt_bbbbbbbbbbbbbbbb");
        let full = menu(&view).unwrap();
        let undo = |i: &muda::MenuItemKind| {
            i.as_submenu().is_some_and(|s| s.text() == "Undo a command's changes")
        };
        assert!(full.items().iter().any(undo), "the tray offers it");
    }

    #[test]
    fn menu_labels_show_ampersands_as_themselves() {
        assert_eq!(label("Cursor · delete a&b.txt · R&D"), "Cursor · delete a&&b.txt · R&&D");
    }
}

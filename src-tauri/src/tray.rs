//! The tray: the state line, "Approvals (N)" with Approve / Deny per waiting approval, Pause /
//! Resume, Open Sluice…, Quit — rebuilt from engine state whenever it changes. An approval is
//! two clicks from the tray icon (open the menu, click Approve) and needs no window.

use sluice_engine::Engine;
use sluice_ipc::{self as ipc, ApprovalDto, DecidedFrom, Verdict};
use tauri::image::Image;
use tauri::menu::{IsMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager, Wry};

use crate::engine::Shell;

const TRAY_ID: &str = "sluice";

const ICON_ACTIVE: &[u8] = include_bytes!("../../icons/tray-active.png");
const ICON_PAUSED: &[u8] = include_bytes!("../../icons/tray-paused.png");
// The same glyphs with a red dot: approvals are waiting.
const ICON_ACTIVE_WAITING: &[u8] = include_bytes!("../../icons/tray-active-waiting.png");
const ICON_PAUSED_WAITING: &[u8] = include_bytes!("../../icons/tray-paused-waiting.png");

/// What the tray shows.
struct View {
    paused: bool,
    pending: Vec<ApprovalDto>,
}

impl View {
    fn of(engine: &Engine) -> View {
        View {
            paused: engine.is_paused().unwrap_or(false),
            pending: ipc::pending_approvals(engine).unwrap_or_else(|e| {
                tracing::warn!(code = %e.code, "cannot list approvals for the tray");
                Vec::new()
            }),
        }
    }

    fn icon(&self) -> tauri::Result<Image<'static>> {
        Image::from_bytes(match (self.paused, self.pending.is_empty()) {
            (false, true) => ICON_ACTIVE,
            (true, true) => ICON_PAUSED,
            (false, false) => ICON_ACTIVE_WAITING,
            (true, false) => ICON_PAUSED_WAITING,
        })
    }

    fn tooltip(&self) -> String {
        let state =
            if self.paused { "Sluice — AI access paused" } else { "Sluice — AI access on" };
        match self.pending.len() {
            0 => state.to_owned(),
            1 => format!("{state} · 1 approval waiting"),
            n => format!("{state} · {n} approvals waiting"),
        }
    }
}

/// Menu labels treat `&` as a mnemonic marker; engine text must show it as itself.
fn label(text: &str) -> String {
    text.replace('&', "&&")
}

fn approvals_menu(app: &AppHandle, view: &View) -> tauri::Result<Submenu<Wry>> {
    let mut entries = Vec::new();
    for a in &view.pending {
        let approve = if view.paused {
            MenuItem::with_id(
                app,
                format!("approve:{}", a.id),
                "Approve (resume AI access first)",
                false,
                None::<&str>,
            )?
        } else {
            MenuItem::with_id(app, format!("approve:{}", a.id), "Approve", true, None::<&str>)?
        };
        let deny = MenuItem::with_id(app, format!("deny:{}", a.id), "Deny", true, None::<&str>)?;
        let details =
            MenuItem::with_id(app, "show-approvals", "Details in Sluice…", true, None::<&str>)?;
        entries.push(Submenu::with_id_and_items(
            app,
            format!("approval:{}", a.id),
            label(&a.headline()),
            true,
            &[&approve, &deny, &details],
        )?);
    }
    let items: Vec<&dyn IsMenuItem<Wry>> =
        entries.iter().map(|e| e as &dyn IsMenuItem<Wry>).collect();
    Submenu::with_id_and_items(
        app,
        "approvals",
        format!("Approvals ({})", view.pending.len()),
        true,
        &items,
    )
}

fn menu(app: &AppHandle, view: &View) -> tauri::Result<Menu<Wry>> {
    let paused = view.paused;
    let state = MenuItem::with_id(
        app,
        "state",
        if paused { "⏸ Paused — resume to allow AI access" } else { "● AI access on" },
        false,
        None::<&str>,
    )?;
    let toggle = MenuItem::with_id(
        app,
        if paused { "resume" } else { "pause" },
        if paused { "Resume AI access" } else { "Pause AI access" },
        true,
        None::<&str>,
    )?;
    let open = MenuItem::with_id(app, "open", "Open Sluice…", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit Sluice", true, None::<&str>)?;
    let sep = || PredefinedMenuItem::separator(app);
    let (s1, s2, s3) = (sep()?, sep()?, sep()?);
    let approvals = if view.pending.is_empty() { None } else { Some(approvals_menu(app, view)?) };
    let mut items: Vec<&dyn IsMenuItem<Wry>> = vec![&state, &s1];
    if let Some(a) = &approvals {
        items.push(a);
        items.push(&s2);
    }
    items.push(&toggle);
    items.push(&s3);
    items.push(&open);
    items.push(&quit);
    Menu::with_items(app, &items)
}

fn on_menu(app: &AppHandle, id: &str) {
    let Some(shell) = app.try_state::<Shell>() else { return };
    let decision = id
        .strip_prefix("approve:")
        .map(|a| (a, Verdict::Approve))
        .or_else(|| id.strip_prefix("deny:").map(|a| (a, Verdict::Deny)));
    match (id, decision) {
        (_, Some((approval, verdict))) => {
            if let Err(e) =
                ipc::decide_approval(&shell.engine, approval, verdict, None, DecidedFrom::Tray)
            {
                tracing::warn!(code = %e.code, "cannot decide an approval from the tray");
                crate::notify(app, "Sluice could not do that", &e.message);
            }
            // Decided meanwhile or expired: the menu was stale, so redraw it either way.
            refresh(app, &shell.engine);
        }
        ("pause" | "resume", _) => {
            if let Err(f) = shell.engine.set_paused(id == "pause") {
                tracing::error!(code = %f.code, "cannot change AI access from the tray");
            }
        }
        ("show-approvals", _) => crate::show_view(app, "approvals"),
        ("open", _) => crate::show_window(app),
        ("quit", _) => app.exit(0),
        _ => {}
    }
}

pub fn create(app: &AppHandle, engine: &Engine) -> tauri::Result<()> {
    let view = View::of(engine);
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(view.icon()?)
        .tooltip(view.tooltip())
        .menu(&menu(app, &view)?)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, event| on_menu(app, event.id.as_ref()))
        .on_tray_icon_event(|tray, event| {
            if let TrayIconEvent::DoubleClick { button: MouseButton::Left, .. }
            | TrayIconEvent::Click {
                button: MouseButton::Middle,
                button_state: MouseButtonState::Up,
                ..
            } = event
            {
                crate::show_window(tray.app_handle());
            }
        })
        .build(app)?;
    Ok(())
}

/// Redraws the tray from the engine's state (access, waiting approvals).
pub fn refresh(app: &AppHandle, engine: &Engine) {
    let Some(tray) = app.tray_by_id(TRAY_ID) else { return };
    let view = View::of(engine);
    let result = (|| -> tauri::Result<()> {
        tray.set_icon(Some(view.icon()?))?;
        tray.set_tooltip(Some(view.tooltip()))?;
        tray.set_menu(Some(menu(app, &view)?))?;
        Ok(())
    })();
    if let Err(err) = result {
        tracing::warn!(%err, "cannot update the tray");
    }
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
                created_ms: 0,
                expires_ms: 1,
                status: sluice_ipc::ApprovalStatus::Pending,
                reason: None,
                decided_ms: None,
                decided_by: None,
            })
            .collect()
    }

    #[test]
    fn tooltip_and_icon_count_waiting_approvals() {
        let v = |paused, n| View { paused, pending: pending(n) };
        assert_eq!(v(false, 0).tooltip(), "Sluice — AI access on");
        assert_eq!(v(false, 1).tooltip(), "Sluice — AI access on · 1 approval waiting");
        assert_eq!(v(true, 3).tooltip(), "Sluice — AI access paused · 3 approvals waiting");
        for (paused, n) in [(false, 0), (true, 0), (false, 2), (true, 2)] {
            assert!(v(paused, n).icon().is_ok());
        }
        assert_ne!(ICON_ACTIVE, ICON_ACTIVE_WAITING);
        assert_ne!(ICON_PAUSED, ICON_PAUSED_WAITING);
    }

    #[test]
    fn menu_labels_show_ampersands_as_themselves() {
        assert_eq!(label("Cursor · delete a&b.txt · R&D"), "Cursor · delete a&&b.txt · R&&D");
    }
}

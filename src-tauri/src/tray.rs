//! The tray: the state line, Pause / Resume, Open Sluice…, Quit — rebuilt from engine state
//! whenever it changes. Approvals and jobs get their submenus in [`activity_items`] when those
//! engine features land.

use tauri::image::Image;
use tauri::menu::{IsMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager, Wry};

use crate::engine::Shell;

const TRAY_ID: &str = "sluice";

const ICON_ACTIVE: &[u8] = include_bytes!("../../icons/tray-active.png");
const ICON_PAUSED: &[u8] = include_bytes!("../../icons/tray-paused.png");

fn icon(paused: bool) -> tauri::Result<Image<'static>> {
    Image::from_bytes(if paused { ICON_PAUSED } else { ICON_ACTIVE })
}

fn tooltip(paused: bool) -> &'static str {
    if paused { "Sluice — AI access paused" } else { "Sluice — AI access on" }
}

fn menu(app: &AppHandle, paused: bool) -> tauri::Result<Menu<Wry>> {
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
    let activity = activity_items(app)?;
    let mut items: Vec<&dyn IsMenuItem<Wry>> = vec![&state];
    let (s1, s2, s3) = (sep()?, sep()?, sep()?);
    items.push(&s1);
    if !activity.is_empty() {
        items.extend(activity.iter().map(|i| i as &dyn IsMenuItem<Wry>));
        items.push(&s2);
    }
    items.push(&toggle);
    items.push(&s3);
    items.push(&open);
    items.push(&quit);
    Menu::with_items(app, &items)
}

/// The slot for "Approvals (N) ▸" and "Jobs (N running) ▸" submenus; empty until the engine
/// has approvals and jobs.
fn activity_items(_app: &AppHandle) -> tauri::Result<Vec<MenuItem<Wry>>> {
    Ok(Vec::new())
}

pub fn create(app: &AppHandle, paused: bool) -> tauri::Result<()> {
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(icon(paused)?)
        .tooltip(tooltip(paused))
        .menu(&menu(app, paused)?)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, event| match event.id.as_ref() {
            "pause" | "resume" => {
                if let Some(shell) = app.try_state::<Shell>()
                    && let Err(f) = shell.engine.set_paused(event.id.as_ref() == "pause")
                {
                    tracing::error!(code = %f.code, "cannot change AI access from the tray");
                }
            }
            "open" => crate::show_window(app),
            "quit" => app.exit(0),
            _ => {}
        })
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

/// Redraws the tray for a new access state (the engine's `AccessChanged`).
pub fn update(app: &AppHandle, paused: bool) {
    let Some(tray) = app.tray_by_id(TRAY_ID) else { return };
    let result = (|| -> tauri::Result<()> {
        tray.set_icon(Some(icon(paused)?))?;
        tray.set_tooltip(Some(tooltip(paused)))?;
        tray.set_menu(Some(menu(app, paused)?))?;
        Ok(())
    })();
    if let Err(err) = result {
        tracing::warn!(%err, "cannot update the tray");
    }
}

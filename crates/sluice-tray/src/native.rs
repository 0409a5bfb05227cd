//! What Sluice shows natively rather than in the page: confirmations the page's script cannot
//! answer (docs/THREATS.md UI-04), a clipboard that a copied secret leaves on time, and
//! notifications.

use sluice_ipc::IpcError;

use crate::App;

/// The desktop the window's commands ask ([`sluice_ipc::dispatch`]): native confirmations,
/// which the window's script cannot click (docs/THREATS.md UI-04), and the clipboard.
pub struct Desktop(pub App);

impl sluice_ipc::dispatch::Desktop for Desktop {
    fn confirm(&self, q: sluice_ipc::dispatch::Question) -> bool {
        let (tx, rx) = std::sync::mpsc::channel();
        ask(&self.0, q.text, q.title, q.yes, q.no, move |yes| {
            let _ = tx.send(yes);
        });
        // Called off the main thread (the dialog needs it); no answer (quitting) is a no.
        rx.recv().unwrap_or(false)
    }

    fn copy_secret(&self, text: String) -> Result<(), IpcError> {
        copy_secret(&self.0, text)
    }

    fn open_link(&self, url: String) -> Result<(), IpcError> {
        open_link(&url)
    }
}

/// Opens `url` (a job's published port on 127.0.0.1, built by the engine) in the user's
/// default browser: the desktop's handler on Linux (GIO, as the file manager would), `open` on
/// macOS, the shell's on Windows. Only the exact form of a job link is ever passed on
/// ([`sluice_core::link::job_link_port`]).
pub fn open_link(url: &str) -> Result<(), IpcError> {
    let fail = |why: String| IpcError { code: "io".into(), message: why };
    if sluice_core::link::job_link_port(url).is_none() {
        return Err(fail("only a job's published port opens in the browser".into()));
    }
    #[cfg(target_os = "linux")]
    let opened =
        gtk::gio::AppInfo::launch_default_for_uri(url, None::<&gtk::gio::AppLaunchContext>)
            .map_err(|e| e.to_string());
    #[cfg(target_os = "macos")]
    let opened = std::process::Command::new("/usr/bin/open")
        .arg(url)
        .spawn()
        .map(drop)
        .map_err(|e| e.to_string());
    #[cfg(windows)]
    let opened = std::process::Command::new("explorer.exe")
        .arg(url)
        .spawn()
        .map(drop)
        .map_err(|e| e.to_string());
    opened.map_err(|e| fail(format!("the browser could not be opened ({e})")))
}

/// Shows a native warning dialog and calls `answer` with `true` only if the user chose `yes`;
/// `no`, closing the dialog or any other outcome is `false`. `no` is the default: Return or
/// Escape keep things as they are, and allowing takes a deliberate Tab or click.
pub fn ask(
    app: &App,
    question: String,
    title: &str,
    yes: &str,
    no: &str,
    answer: impl FnOnce(bool) + Send + 'static,
) {
    #[cfg(target_os = "linux")]
    {
        let (title, yes, no) = (title.to_owned(), yes.to_owned(), no.to_owned());
        let answer = std::sync::Mutex::new(Some(answer));
        // If the event loop is gone (quitting), `answer` is dropped unanswered: a no.
        app.run_on_main(move || {
            gtk_confirm(&question, &title, &yes, &no, move |chose| {
                if let Some(answer) = answer.lock().ok().and_then(|mut a| a.take()) {
                    answer(chose);
                }
            });
        });
    }
    #[cfg(not(target_os = "linux"))]
    {
        let (title, yes, no) = (title.to_owned(), yes.to_owned(), no.to_owned());
        let show = move || {
            // rfd reports a closed dialog as the cancel button, so `no` must be that button.
            let result = rfd::MessageDialog::new()
                .set_level(rfd::MessageLevel::Warning)
                .set_title(title)
                .set_description(question)
                .set_buttons(rfd::MessageButtons::OkCancelCustom(yes.clone(), no))
                .show();
            answer(matches!(result, rfd::MessageDialogResult::Custom(label) if label == yes));
        };
        // macOS shows dialogs from the main thread only; on Windows a thread of its own keeps
        // the tray responsive while the dialog waits.
        #[cfg(target_os = "macos")]
        app.run_on_main(show);
        #[cfg(not(target_os = "macos"))]
        {
            let _ = app;
            std::thread::spawn(show);
        }
    }
}

/// A GTK message dialog, kept above other windows: `no` first, focused and the default
/// response; closing it answers `no`. On the main thread.
#[cfg(target_os = "linux")]
fn gtk_confirm(question: &str, title: &str, yes: &str, no: &str, answer: impl Fn(bool) + 'static) {
    use gtk::prelude::*;
    // The window is another process's: the dialog stands on its own, in the screen's middle.
    let dialog = gtk::MessageDialog::new(
        None::<&gtk::Window>,
        gtk::DialogFlags::MODAL,
        gtk::MessageType::Warning,
        gtk::ButtonsType::None,
        question,
    );
    dialog.set_title(title);
    dialog.set_keep_above(true);
    dialog.set_position(gtk::WindowPosition::Center);
    dialog.add_button(no, gtk::ResponseType::No);
    dialog.add_button(yes, gtk::ResponseType::Yes);
    dialog.set_default_response(gtk::ResponseType::No);
    dialog.connect_response(move |dialog, response| {
        answer(response == gtk::ResponseType::Yes);
        // SAFETY: the dialog is referenced only by GTK and this handler, which is done with it;
        // destroying a dialog from its response handler is how GTK dialogs end.
        unsafe { dialog.destroy() };
    });
    dialog.show_all();
    if let Some(button) = dialog.widget_for_response(gtk::ResponseType::No) {
        button.grab_focus();
    }
    dialog.present();
}

/// How long a copied secret stays on the clipboard.
#[cfg(target_os = "linux")]
const SECRET_ON_CLIPBOARD: std::time::Duration = std::time::Duration::from_secs(60);

/// Puts a secret on the clipboard and takes it off after a minute, unless something else was
/// copied since. Done here rather than in the page: a page may write to the clipboard only
/// right after a click, and the window may be closed by the time the minute is up. Only Linux
/// so far; elsewhere the page copies and clears it (ui/src/api.ts).
pub fn copy_secret(app: &App, text: String) -> Result<(), IpcError> {
    #[cfg(target_os = "linux")]
    {
        let keep = clipboard_keep();
        app.run_on_main(move || gtk_copy_secret(text, keep));
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        // The page copies it (on a click) and clears it itself; see ui/src/api.ts.
        let _ = (app, text);
        Err(sluice_core::Failure::new(
            sluice_core::ErrorCode::Forbidden,
            "the window copies secrets on this system",
        )
        .into())
    }
}

/// [`SECRET_ON_CLIPBOARD`]; debug builds (the end-to-end test) may shorten it with
/// `SLUICE_CLIPBOARD_CLEAR_SECS`.
#[cfg(target_os = "linux")]
fn clipboard_keep() -> std::time::Duration {
    #[cfg(debug_assertions)]
    if let Some(secs) =
        std::env::var("SLUICE_CLIPBOARD_CLEAR_SECS").ok().and_then(|s| s.parse::<u64>().ok())
    {
        return std::time::Duration::from_secs(secs.clamp(1, 60));
    }
    SECRET_ON_CLIPBOARD
}

#[cfg(target_os = "linux")]
fn gtk_copy_secret(text: String, keep: std::time::Duration) {
    use gtk::{gdk, glib};
    let clipboard = gtk::Clipboard::get(&gdk::SELECTION_CLIPBOARD);
    clipboard.set_text(&text);
    glib::timeout_add_local_once(keep, move || {
        let clipboard = gtk::Clipboard::get(&gdk::SELECTION_CLIPBOARD);
        // Only our own secret is taken off: whatever the user copied since stays.
        if clipboard.wait_for_text().is_some_and(|now| now.as_str() == text) {
            clipboard.clear();
        }
    });
}

/// A notification about something a view shows (`approvals`, `jobs`): a click on it opens
/// the window on that view.
pub fn notify_about(app: &App, view: &'static str, title: &str, body: &str) {
    show_notification(app, title, body, Some(view));
}

/// A native notification; where no notification server runs, only a log line.
pub fn notify(app: &App, title: &str, body: &str) {
    show_notification(app, title, body, None);
}

fn show_notification(app: &App, title: &str, body: &str, view: Option<&'static str>) {
    let mut n = notify_rust::Notification::new();
    n.appname("Sluice").summary(title).body(body);
    #[cfg(all(unix, not(target_os = "macos")))]
    {
        // The freedesktop "default" action is a click on the notification itself.
        if view.is_some() {
            n.action("default", "Open in Sluice");
        }
        match n.show() {
            Ok(handle) => {
                let app = app.clone();
                // Waits on D-Bus until the notification is clicked or goes away.
                let waited = std::thread::Builder::new().name("sluice-notification".into()).spawn(
                    move || {
                        handle.wait_for_action(|action| {
                            if action == "default"
                                && let Some(view) = view
                            {
                                app.show(Some(view));
                            }
                        })
                    },
                );
                if let Err(err) = waited {
                    tracing::warn!(%err, "cannot wait on a notification");
                }
            }
            Err(err) => tracing::warn!(%err, "cannot show a notification"),
        }
    }
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    {
        let _ = (app, view);
        if let Err(err) = n.show() {
            tracing::warn!(%err, "cannot show a notification");
        }
    }
}

//! The window process: `sluice-app --window`, started by the tray process while the control
//! center is open and gone when it closes — with WebKit and its processes, so a Sluice in the
//! tray holds no browser engine.
//!
//! It owns the webview and nothing else: every command the page calls goes to the tray process
//! over the pipe on stdin/stdout ([`sluice_ipc::wire`]), and engine events come back the same
//! way. Tauri checks each call against the capabilities before it gets here.

use std::collections::HashMap;
use std::io::{BufReader, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use sluice_core::{ErrorCode, Failure};
use sluice_ipc::IpcError;
use sluice_ipc::wire::{self, ToTray, ToWindow};
use tauri::ipc::{Invoke, InvokeBody, InvokeError};
use tauri::{AppHandle, Emitter, Manager};

type Replies =
    Arc<Mutex<HashMap<u64, tokio::sync::oneshot::Sender<Result<serde_json::Value, IpcError>>>>>;

/// Runs the window until it is closed or the tray process goes away.
pub fn run(view: Option<String>) {
    let (from_tray, to_tray) = match take_stdio() {
        Ok(pipe) => pipe,
        Err(err) => {
            eprintln!("sluice-app --window: {err}");
            std::process::exit(2);
        }
    };
    let to_tray = Arc::new(Mutex::new(to_tray));
    let replies: Replies = Arc::default();
    let next_id = AtomicU64::new(1);
    let waiting = replies.clone();
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .plugin(crate::autostart())
        .invoke_handler(move |invoke| {
            forward(invoke, next_id.fetch_add(1, Ordering::Relaxed), &to_tray, &waiting);
            true
        })
        .setup(move |app| {
            open(app.handle(), view.as_deref())?;
            let handle = app.handle().clone();
            std::thread::Builder::new()
                .name("sluice-from-tray".into())
                .spawn(move || listen(handle, from_tray, replies))?;
            Ok(())
        })
        .build(crate::context())
        .unwrap_or_else(|err| {
            eprintln!("sluice-app --window: cannot start: {err}");
            std::process::exit(1);
        });
    // Closing the window ends this process (Tauri exits when its last window closes).
    app.run(|_, _| {});
}

/// Sends one call to the tray process; the page's promise settles when the reply comes.
fn forward(invoke: Invoke, id: u64, to_tray: &Mutex<Box<dyn Write + Send>>, replies: &Replies) {
    let Invoke { message, resolver, .. } = invoke;
    let args = match message.payload() {
        InvokeBody::Json(args) => args.clone(),
        InvokeBody::Raw(_) => {
            let e =
                IpcError::from(Failure::new(ErrorCode::InvalidArgument, "arguments must be JSON"));
            resolver.reject(e);
            return;
        }
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    lock(replies).insert(id, tx);
    let call = ToTray::Call { id, cmd: message.command().to_owned(), args };
    if wire::send(&mut *lock(to_tray), &call).is_err() {
        lock(replies).remove(&id);
        resolver.reject(gone());
        return;
    }
    resolver.respond_async(async move {
        match rx.await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(InvokeError(serde_json::to_value(e).unwrap_or_default())),
            Err(_) => Err(InvokeError(serde_json::to_value(gone()).unwrap_or_default())),
        }
    });
}

fn gone() -> IpcError {
    IpcError::from(Failure::new(ErrorCode::Internal, "Sluice is not running: start it again"))
}

/// Reads what the tray process sends until it closes the pipe (it quit or closed the window),
/// then ends this process.
fn listen(app: AppHandle, from_tray: Box<dyn Read + Send>, replies: Replies) {
    let mut reader = wire::Reader::new(BufReader::new(from_tray));
    loop {
        match reader.read::<ToWindow>() {
            Ok(Some(ToWindow::Reply { id, result })) => {
                if let Some(tx) = lock(&replies).remove(&id) {
                    let _ = tx.send(result);
                }
            }
            Ok(Some(ToWindow::Event { event })) => {
                let _ = app.emit(sluice_ipc::EVENT_CHANNEL, event);
            }
            Ok(Some(ToWindow::Show { view })) => {
                if let Some(w) = app.get_webview_window("main") {
                    let _ = w.unminimize();
                    let _ = w.show();
                    let _ = w.set_focus();
                }
                if let Some(view) = view {
                    let _ =
                        app.emit(sluice_ipc::EVENT_CHANNEL, sluice_ipc::UiEvent::OpenView { view });
                }
            }
            Ok(None) => break,
            Err(err) => {
                tracing::error!(%err, "the tray process sent something unreadable");
                break;
            }
        }
    }
    lock(&replies).clear();
    app.exit(0);
}

/// Opens the control-center window from its configuration in tauri.conf.json, on `view`
/// (the page reads it from the URL's fragment).
fn open(app: &AppHandle, view: Option<&str>) -> tauri::Result<()> {
    let mut config = app
        .config()
        .app
        .windows
        .iter()
        .find(|w| w.label == "main")
        .cloned()
        .ok_or(tauri::Error::WindowNotFound)?;
    if let Some(view) = view.filter(|v| v.chars().all(|c| c.is_ascii_lowercase())) {
        config.url = tauri::WebviewUrl::App(format!("index.html#{view}").into());
    }
    let window = tauri::WebviewWindowBuilder::from_config(app, &config)?
        .on_navigation(is_own_page)
        .on_new_window(|_, _| tauri::webview::NewWindowResponse::Deny)
        .build()?;
    window.set_focus()
}

/// Whether `url` is one of the window's own pages, the only ones it may show (docs/THREATS.md
/// UI-02): a link in tool output, a `location` set by a script, a form or a frame never takes
/// the window (and its IPC) to another page, and `window.open` opens nothing. The page has no
/// external links; Sluice opens none.
pub(crate) fn is_own_page(url: &tauri::Url) -> bool {
    let host = url.host_str();
    match url.scheme() {
        // Linux and macOS serve the embedded page as tauri://localhost; Windows as
        // http(s)://tauri.localhost.
        "tauri" => host == Some("localhost") && url.port().is_none(),
        "http" | "https" if host == Some("tauri.localhost") => url.port().is_none(),
        // `cargo tauri dev` only: the page from the Vite server.
        "http" => cfg!(dev) && host == Some("localhost") && url.port() == Some(5173),
        _ => false,
    }
}

fn lock<T: ?Sized>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The pipe to the tray process: stdin and stdout, taken over so that nothing else in this
/// process (GTK, WebKit, a stray print) or in the processes WebKit starts can read or write it.
/// Standard output then goes to standard error, and standard input reads nothing.
#[cfg(unix)]
fn take_stdio() -> std::io::Result<(Box<dyn Read + Send>, Box<dyn Write + Send>)> {
    use std::io::IsTerminal;
    use std::os::fd::AsFd;
    if std::io::stdin().is_terminal() {
        return Err(std::io::Error::other("only Sluice itself starts the window process"));
    }
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    // Duplicates are close-on-exec: processes started from here do not inherit them.
    let from_tray = rustix::io::fcntl_dupfd_cloexec(stdin.as_fd(), 3)?;
    let to_tray = rustix::io::fcntl_dupfd_cloexec(stdout.as_fd(), 3)?;
    rustix::stdio::dup2_stdout(std::io::stderr().as_fd())?;
    rustix::stdio::dup2_stdin(std::fs::File::open("/dev/null")?.as_fd())?;
    Ok((Box::new(std::fs::File::from(from_tray)), Box::new(std::fs::File::from(to_tray))))
}

/// The pipe to the tray process: stdin and stdout. The webview (WebView2) writes nothing to
/// standard output.
#[cfg(windows)]
fn take_stdio() -> std::io::Result<(Box<dyn Read + Send>, Box<dyn Write + Send>)> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        return Err(std::io::Error::other("only Sluice itself starts the window process"));
    }
    Ok((Box::new(std::io::stdin()), Box::new(std::io::stdout())))
}

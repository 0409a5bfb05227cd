//! One conversation with a language server over a byte channel: requests matched to their
//! answers by id, the server's own requests answered (configuration, progress, capability
//! registration; never an edit), published diagnostics kept per file, and the project's files
//! opened and kept in step before they are asked about.
//!
//! The server is not trusted: it runs the project's code. Its messages are bounded
//! ([`super::wire`]), it cannot make Sluice change a file (`workspace/applyEdit` is declined),
//! and every answer is waited for with a deadline, so a server that stalls or dies fails the
//! question, not the engine.

use std::collections::HashMap;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::wire;

/// Why a question to the server got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LspError {
    /// The server's output ended (it exited, crashed or was stopped).
    Ended,
    /// No answer within the deadline.
    TimedOut { method: String, after: Duration },
    /// The server answered with an error.
    Server { code: i64, message: String },
    /// The server's answer, or the file asked about, is not what the protocol says.
    Protocol(String),
}

impl std::fmt::Display for LspError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LspError::Ended => f.write_str("the language server ended"),
            LspError::TimedOut { method, after } => {
                write!(
                    f,
                    "the language server did not answer {method} within {} s",
                    after.as_secs()
                )
            }
            LspError::Server { code, message } => {
                let message = sluice_core::text::visible(message);
                write!(f, "the language server refused ({code}): {message}")
            }
            LspError::Protocol(what) => write!(f, "the language server's answer: {what}"),
        }
    }
}

impl std::error::Error for LspError {}

/// How the server counts columns: what it chose of what Sluice offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

impl Encoding {
    /// The server's column for the `chars`-th character (0-based) of `line`.
    pub fn column(self, line: &str, chars: usize) -> u32 {
        let prefix = line.chars().take(chars);
        let n = match self {
            Encoding::Utf8 => prefix.map(char::len_utf8).sum::<usize>(),
            Encoding::Utf16 => prefix.map(char::len_utf16).sum::<usize>(),
        };
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// The character index (0-based) of the server's `column` in `line` (past the end: the
    /// line's length).
    pub fn chars(self, line: &str, column: u32) -> usize {
        let mut units = 0usize;
        for (i, c) in line.chars().enumerate() {
            if units >= column as usize {
                return i;
            }
            units += match self {
                Encoding::Utf8 => c.len_utf8(),
                Encoding::Utf16 => c.len_utf16(),
            };
        }
        line.chars().count()
    }

    /// The byte offset in `line` of the server's `column`.
    pub fn byte(self, line: &str, column: u32) -> usize {
        line.char_indices().nth(self.chars(line, column)).map_or(line.len(), |(b, _)| b)
    }
}

type Reply = Result<Value, LspError>;

/// Diagnostics a server published for one file, and how many times it did.
#[derive(Debug, Clone, Default)]
struct Published {
    times: u64,
    items: Vec<Value>,
}

#[derive(Default)]
struct Shared {
    pending: Mutex<HashMap<i64, mpsc::Sender<Reply>>>,
    diagnostics: Mutex<HashMap<String, Published>>,
    published: Condvar,
    /// The server's work in progress (loading a project, indexing), by token: begun, not ended.
    progress: Mutex<Progress>,
    progressed: Condvar,
    ended: AtomicBool,
}

#[derive(Default)]
struct Progress {
    active: std::collections::HashSet<String>,
}

/// How long the first question waits for the server to have checked its file.
const FIRST_CHECK: Duration = Duration::from_secs(20);

/// A file the server has open, as Sluice last sent it.
struct Opened {
    version: i32,
    hash: u64,
    /// How many diagnostics publications for it had been seen when it was last sent.
    published_before: u64,
}

type Writer = Arc<Mutex<Box<dyn Write + Send>>>;

/// A language server, initialized, with the project at `root` (as the server sees it).
pub struct Session {
    out: Writer,
    shared: Arc<Shared>,
    next: AtomicI64,
    root: PathBuf,
    root_uri: url::Url,
    encoding: Encoding,
    opened: Mutex<HashMap<String, Opened>>,
    /// Whether a question was asked yet ([`Session::settle`]).
    asked: AtomicBool,
    /// The server knows only the files it was sent (clangd without a compilation database):
    /// a question about uses sends it the project's files of its languages first.
    knows_only_open: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Session {
    /// Starts the conversation: a reader thread on `output`, then `initialize` (within
    /// `timeout`) and `initialized`. `root` is the project's folder where the server sees it.
    pub fn start(
        input: Box<dyn Write + Send>,
        output: Box<dyn Read + Send>,
        root: &Path,
        program: &str,
        timeout: Duration,
    ) -> Result<Session, LspError> {
        let root_uri = url::Url::from_directory_path(root)
            .map_err(|()| LspError::Protocol("the project's folder is not absolute".into()))?;
        let out: Writer = Arc::new(Mutex::new(input));
        let shared = Arc::new(Shared::default());
        let (reader_shared, reader_out, folder) =
            (shared.clone(), out.clone(), root_uri.to_string());
        std::thread::Builder::new()
            .name("sluice-lsp-read".into())
            .spawn(move || read_loop(output, &reader_shared, &reader_out, &folder))
            .map_err(|e| LspError::Protocol(format!("starting its reader: {e}")))?;
        let mut session = Session {
            out,
            shared,
            next: AtomicI64::new(1),
            root: root.to_path_buf(),
            root_uri,
            encoding: Encoding::Utf16,
            opened: Mutex::new(HashMap::new()),
            asked: AtomicBool::new(false),
            knows_only_open: AtomicBool::new(false),
        };
        let params = initialize_params(&session.root_uri, program);
        let answer = session.request("initialize", params, timeout)?;
        // clangd without a compilation database knows only the files it is sent.
        session.set_knows_only_open(program == "clangd");
        session.encoding = match answer.pointer("/capabilities/positionEncoding") {
            Some(Value::String(e)) if e == "utf-8" => Encoding::Utf8,
            _ => Encoding::Utf16,
        };
        session.notify("initialized", json!({}))?;
        Ok(session)
    }

    /// Says the server knows only the files it is sent ([`Session::knows_only_open`]).
    pub fn set_knows_only_open(&self, yes: bool) {
        self.knows_only_open.store(yes, Ordering::SeqCst);
    }

    pub fn knows_only_open(&self) -> bool {
        self.knows_only_open.load(Ordering::SeqCst)
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Whether the server's output has ended.
    pub fn ended(&self) -> bool {
        self.shared.ended.load(Ordering::SeqCst)
    }

    /// Sends a request and waits for its answer; after `timeout` the request is cancelled.
    pub fn request(&self, method: &str, params: Value, timeout: Duration) -> Reply {
        if self.ended() {
            return Err(LspError::Ended);
        }
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = mpsc::channel();
        lock(&self.shared.pending).insert(id, tx);
        let sent =
            self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        if let Err(e) = sent {
            lock(&self.shared.pending).remove(&id);
            return Err(e);
        }
        match rx.recv_timeout(timeout) {
            Ok(reply) => reply.map_err(|e| self.unrooted_error(e)),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(LspError::Ended),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                lock(&self.shared.pending).remove(&id);
                let _ = self.notify("$/cancelRequest", json!({"id": id}));
                Err(LspError::TimedOut { method: method.to_owned(), after: timeout })
            }
        }
    }

    pub fn notify(&self, method: &str, params: Value) -> Result<(), LspError> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    fn send(&self, message: &Value) -> Result<(), LspError> {
        let mut out = lock(&self.out);
        wire::write(&mut **out, message).map_err(|_| LspError::Ended)
    }

    /// The URI of a project-relative path.
    pub fn uri(&self, rel: &str) -> Result<String, LspError> {
        let encoded: Vec<String> = rel.split('/').map(encode_segment).collect();
        self.root_uri
            .join(&encoded.join("/"))
            .map(String::from)
            .map_err(|_| LspError::Protocol(format!("no URI for {rel:?}")))
    }

    /// The project-relative path of a `file:` URI, or `None` when it lies outside the project
    /// (a library, the standard library, anything of the server's own).
    pub fn relative(&self, uri: &str) -> Option<String> {
        let path = url::Url::parse(uri).ok()?.to_file_path().ok()?;
        let rel = path.strip_prefix(&self.root).ok()?;
        let parts: Option<Vec<&str>> = rel
            .components()
            .map(|c| match c {
                std::path::Component::Normal(s) => s.to_str(),
                _ => None,
            })
            .collect();
        let parts = parts?;
        (!parts.is_empty()).then(|| parts.join("/"))
    }

    /// `text` with the project's physical folder (as the server sees it) written as `.`: a
    /// server's messages name files by their full paths, which never leave the machine.
    pub fn unrooted(&self, text: &str) -> String {
        let root = self.root.to_string_lossy();
        let root = root.trim_end_matches('/');
        if root.is_empty() {
            return text.to_owned();
        }
        text.replace(self.root_uri.as_str().trim_end_matches('/'), ".").replace(root, ".")
    }

    /// An error as it may be shown: a server's own words name files by their full paths, and
    /// may hold anything it read; the project's folder is written as `.` and secrets redacted.
    pub fn unrooted_error(&self, e: LspError) -> LspError {
        let shown = |text: &str| sluice_core::redact::redact(&self.unrooted(text)).into_owned();
        match e {
            LspError::Server { code, message } => {
                LspError::Server { code, message: shown(&message) }
            }
            LspError::Protocol(what) => LspError::Protocol(shown(&what)),
            other => other,
        }
    }

    /// Makes the server's copy of `rel` the given text: opens it, or sends the new text when it
    /// changed since it was last sent.
    pub fn sync(&self, rel: &str, language_id: &str, text: &str) -> Result<(), LspError> {
        let uri = self.uri(rel)?;
        let hash = hash(text);
        let published_before = lock(&self.shared.diagnostics).get(&uri).map_or(0, |p| p.times);
        let mut opened = lock(&self.opened);
        match opened.get_mut(rel) {
            Some(doc) if doc.hash == hash => Ok(()),
            Some(doc) => {
                doc.version += 1;
                doc.hash = hash;
                doc.published_before = published_before;
                self.notify(
                    "textDocument/didChange",
                    json!({
                        "textDocument": {"uri": uri, "version": doc.version},
                        "contentChanges": [{"text": text}],
                    }),
                )
            }
            None => {
                opened.insert(rel.to_owned(), Opened { version: 1, hash, published_before });
                self.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {
                        "uri": uri, "languageId": language_id, "version": 1, "text": text,
                    }}),
                )
            }
        }
    }

    /// The diagnostics the server published for `rel` after it was last synced, waiting up to
    /// `wait` for them; `None` when none came in time.
    pub fn diagnostics(&self, rel: &str, wait: Duration) -> Result<Option<Vec<Value>>, LspError> {
        let uri = self.uri(rel)?;
        let before = lock(&self.opened).get(rel).map_or(0, |d| d.published_before);
        let deadline = Instant::now() + wait;
        let mut published = lock(&self.shared.diagnostics);
        loop {
            if let Some(p) = published.get(&uri).filter(|p| p.times > before) {
                return Ok(Some(p.items.clone()));
            }
            if self.ended() {
                return Err(LspError::Ended);
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            published = self
                .shared
                .published
                .wait_timeout(published, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Waits, up to `max`, until the server has no work in progress (a project loading, an
    /// index being built), so a question is answered from the whole project. Before the first
    /// question it also waits for the server to have checked `rel` (its first diagnostics):
    /// tsserver answers from a half-loaded project before that, and says nothing of loading
    /// until it starts.
    pub fn settle(&self, rel: &str, max: Duration) {
        let deadline = Instant::now() + max;
        if !self.asked.swap(true, Ordering::SeqCst) {
            let _ = self.diagnostics(rel, FIRST_CHECK.min(max));
        }
        let mut progress = lock(&self.shared.progress);
        while !progress.active.is_empty() && !self.ended() {
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            progress = self.wait_progress(progress, deadline - now);
        }
    }

    fn wait_progress<'a>(
        &self,
        guard: MutexGuard<'a, Progress>,
        wait: Duration,
    ) -> MutexGuard<'a, Progress> {
        self.shared.progressed.wait_timeout(guard, wait).unwrap_or_else(|p| p.into_inner()).0
    }

    /// Asks the server to shut down and exit (best effort; the job's end is the caller's).
    pub fn shutdown(&self) {
        if self.request("shutdown", Value::Null, Duration::from_secs(2)).is_ok() {
            let _ = self.notify("exit", Value::Null);
        }
    }
}

/// What Sluice tells a server it can do: navigation, hover, symbols, diagnostics and rename
/// (prepared as a preview, never applied by the server), in UTF-8 columns where it can; and
/// the options `program` needs.
fn initialize_params(root: &url::Url, program: &str) -> Value {
    let root = root.as_str();
    // A rename at a use of an imported name renames the name itself, in every file, rather
    // than the import's local alias (tsserver's default for editors).
    let options = match program {
        "typescript-language-server" => {
            json!({"preferences": {"providePrefixAndSuffixTextForRename": false}})
        }
        _ => Value::Null,
    };
    json!({
        "initializationOptions": options,
        "processId": Value::Null,
        "clientInfo": {"name": "sluice"},
        "rootUri": root,
        "workspaceFolders": [{"uri": root, "name": "project"}],
        "capabilities": {
            "general": {"positionEncodings": ["utf-8", "utf-16"]},
            "workspace": {
                "configuration": true,
                "workspaceFolders": true,
                "symbol": {},
                "applyEdit": false,
            },
            "textDocument": {
                "synchronization": {"dynamicRegistration": false},
                "definition": {"linkSupport": true},
                "references": {},
                "hover": {"contentFormat": ["plaintext", "markdown"]},
                "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
                "publishDiagnostics": {},
                "rename": {"prepareSupport": false},
            },
            "window": {"workDoneProgress": true},
        },
    })
}

/// Reads the server's messages until its output ends: answers go to their waiters, the
/// server's requests are answered, diagnostics are kept.
fn read_loop(output: Box<dyn Read + Send>, shared: &Shared, out: &Writer, folder: &str) {
    let mut reader = BufReader::new(output);
    while let Ok(Some(message)) = wire::read(&mut reader) {
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").cloned();
        match (method, id) {
            (None, Some(id)) => {
                let Some(id) = id.as_i64() else { continue };
                let Some(waiter) = lock(&shared.pending).remove(&id) else { continue };
                let reply = match message.get("error") {
                    Some(e) => Err(LspError::Server {
                        code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
                        message: e.get("message").and_then(Value::as_str).unwrap_or("").to_owned(),
                    }),
                    None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = waiter.send(reply);
            }
            (Some(method), Some(id)) => {
                if method == "window/workDoneProgress/create" {
                    progress(shared, message.get("params"), true);
                }
                let answer = answer_request(method, message.get("params"), folder);
                let reply = match answer {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err((code, text)) => json!({
                        "jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text},
                    }),
                };
                if wire::write(&mut **lock(out), &reply).is_err() {
                    break;
                }
            }
            (Some("textDocument/publishDiagnostics"), None) => {
                let params = message.get("params");
                let uri = params.and_then(|p| p.get("uri")).and_then(Value::as_str);
                let items = params.and_then(|p| p.get("diagnostics")).and_then(Value::as_array);
                if let (Some(uri), Some(items)) = (uri, items) {
                    let mut all = lock(&shared.diagnostics);
                    let entry = all.entry(uri.to_owned()).or_default();
                    entry.times += 1;
                    entry.items = items.clone();
                    shared.published.notify_all();
                }
            }
            (Some("$/progress"), None) => {
                let params = message.get("params");
                let kind = params.and_then(|p| p.pointer("/value/kind")).and_then(Value::as_str);
                match kind {
                    Some("begin") => progress(shared, params, true),
                    Some("end") => progress(shared, params, false),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    shared.ended.store(true, Ordering::SeqCst);
    shared.progressed.notify_all();
    // Waiters see their channel close: the server ended.
    lock(&shared.pending).clear();
    let _guard = lock(&shared.diagnostics);
    shared.published.notify_all();
}

/// A piece of the server's work begun (or announced) or ended; tokens are bounded in number so
/// a server cannot grow the set without end.
fn progress(shared: &Shared, params: Option<&Value>, begun: bool) {
    let Some(token) = params.and_then(|p| p.get("token")) else { return };
    let token = match token {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut progress = lock(&shared.progress);
    if !begun {
        progress.active.remove(&token);
    } else if progress.active.len() < 1024 {
        progress.active.insert(token);
    }
    shared.progressed.notify_all();
}

/// What Sluice answers a server that asks something: no settings of its own, progress and
/// registrations accepted, the one folder, and no edit applied.
fn answer_request(
    method: &str,
    params: Option<&Value>,
    folder: &str,
) -> Result<Value, (i64, String)> {
    match method {
        "workspace/configuration" => {
            let n =
                params.and_then(|p| p.get("items")).and_then(Value::as_array).map_or(0, Vec::len);
            Ok(Value::Array(vec![Value::Null; n.min(1024)]))
        }
        "window/workDoneProgress/create"
        | "client/registerCapability"
        | "client/unregisterCapability"
        | "window/showMessageRequest"
        | "window/showDocument"
        | "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/codeLens/refresh"
        | "workspace/diagnostic/refresh" => Ok(Value::Null),
        "workspace/workspaceFolders" => Ok(json!([{"uri": folder, "name": "project"}])),
        "workspace/applyEdit" => Ok(json!({
            "applied": false,
            "failureReason": "Sluice applies no edit a language server sends",
        })),
        _ => Err((-32601, format!("Sluice does not handle {method}"))),
    }
}

fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_convert_both_ways_in_either_encoding() {
        let line = "let é𝄞x = 1;";
        // `x` is the 7th character: 5 + é (2 bytes, 1 unit) + 𝄞 (4 bytes, 2 units).
        assert_eq!(Encoding::Utf8.column(line, 6), 10);
        assert_eq!(Encoding::Utf16.column(line, 6), 7);
        assert_eq!(Encoding::Utf8.chars(line, 10), 6);
        assert_eq!(Encoding::Utf16.chars(line, 7), 6);
        assert_eq!(Encoding::Utf16.byte(line, 7), 10);
        assert_eq!(Encoding::Utf8.chars(line, 999), line.chars().count());
    }

    /// A server's refusal that names the project's physical folder, and a secret it read, is
    /// shown with neither (a fake server over a loopback connection answers `initialize`, then
    /// refuses). The same on every system: the folder is one of that system's absolute paths.
    #[test]
    fn a_servers_refusal_never_carries_the_physical_folder_or_a_secret() {
        use std::io::BufReader;
        use std::net::{TcpListener, TcpStream};
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
        let ours = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let (theirs, _) = listener.accept().expect("accept");
        let root = std::path::PathBuf::from(if cfg!(windows) {
            r"C:\Users\someone\secret-project"
        } else {
            "/home/someone/secret-project"
        });
        let named = root.join("a.py").display().to_string();
        let key = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        let fake = std::thread::spawn(move || {
            let mut input = BufReader::new(theirs.try_clone().expect("clone"));
            let mut out = theirs;
            while let Ok(Some(msg)) = wire::read(&mut input) {
                let Some(id) = msg.get("id").cloned() else { continue };
                let reply = match msg["method"].as_str() {
                    Some("initialize") => json!({"id": id, "result": {"capabilities": {}}}),
                    _ => json!({"id": id, "error": {"code": -32603, "message":
                        format!("cannot read {named}: token {key}")}}),
                };
                if wire::write(&mut out, &reply).is_err() {
                    return;
                }
            }
        });
        let closer = ours.try_clone().expect("clone");
        let reader = Box::new(ours.try_clone().expect("clone"));
        let session =
            Session::start(Box::new(ours), reader, &root, "fake", Duration::from_secs(10))
                .expect("start");
        let err = session.request("textDocument/hover", json!({}), Duration::from_secs(10));
        let Err(LspError::Server { message, .. }) = err else { panic!("{err:?}") };
        let shown = format!(".{}a.py", std::path::MAIN_SEPARATOR);
        assert!(message.contains(&shown), "{message}");
        let home = root.parent().expect("parent").display().to_string();
        assert!(!message.contains(&home) && !message.contains(key), "{message}");
        // The session's reader holds its end open: close the socket so the fake sees the end.
        let _ = closer.shutdown(std::net::Shutdown::Both);
        drop(session);
        let _ = fake.join();
    }

    #[test]
    fn the_server_may_not_apply_edits_and_unknown_requests_are_refused() {
        let declined = answer_request("workspace/applyEdit", None, "file:///p/").expect("answer");
        assert_eq!(declined["applied"], false);
        assert!(answer_request("sluice/anything", None, "file:///p/").is_err());
        let items = json!({"items": [{}, {}]});
        assert_eq!(
            answer_request("workspace/configuration", Some(&items), "").expect("ok"),
            json!([null, null])
        );
    }
}

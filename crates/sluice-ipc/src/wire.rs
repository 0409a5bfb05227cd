//! The pipe between the desktop app's two processes: the tray process (engine, tray,
//! notifications) and the window process (the webview, started only while the window is open).
//! One JSON message per line; JSON escapes line breaks inside strings, so a line is a message.
//!
//! The window process forwards each command the page calls as a [`ToTray::Call`] and gets a
//! [`ToWindow::Reply`] with the same id; engine events and "show this view" arrive unasked.

use std::io::{self, BufRead, Read, Write};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{IpcError, UiEvent};

/// The argument that makes `sluice-app` the window process.
pub const WINDOW_ARG: &str = "--window";
/// The argument that starts Sluice in the tray, without opening its window (a start at login).
pub const HIDDEN_ARG: &str = "--hidden";

/// From the window process to the tray process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ToTray {
    /// The page called command `cmd` with `args` (its argument object).
    Call { id: u64, cmd: String, args: Value },
}

/// From the tray process to the window process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ToWindow {
    /// The answer to the [`ToTray::Call`] with this id.
    Reply { id: u64, result: Result<Value, IpcError> },
    /// An engine event for the page.
    Event { event: UiEvent },
    /// Show, raise and focus the window, on `view` if one is given.
    Show { view: Option<String> },
}

/// The longest message either side accepts (a page of job log or audit entries is far less).
pub const MAX_MESSAGE: usize = 32 << 20;

/// Writes one message and flushes it.
pub fn send<T: Serialize>(out: &mut impl Write, message: &T) -> io::Result<()> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()
}

/// Reads messages, one per line.
pub struct Reader<R> {
    input: R,
    line: Vec<u8>,
}

impl<R: BufRead> Reader<R> {
    pub fn new(input: R) -> Reader<R> {
        Reader { input, line: Vec::new() }
    }

    /// The next message; `None` at the end of the stream. A line longer than [`MAX_MESSAGE`]
    /// or one that is not a message is an `InvalidData` error: the other side is broken, and
    /// the pipe should be closed.
    pub fn read<T: DeserializeOwned>(&mut self) -> io::Result<Option<T>> {
        self.line.clear();
        let limit = MAX_MESSAGE as u64 + 1;
        let n = self.input.by_ref().take(limit).read_until(b'\n', &mut self.line)?;
        if n == 0 {
            return Ok(None);
        }
        if self.line.last() != Some(&b'\n') {
            let why = if n as u64 == limit { "message too long" } else { "message cut short" };
            return Err(io::Error::new(io::ErrorKind::InvalidData, why));
        }
        serde_json::from_slice(&self.line)
            .map(Some)
            .map_err(|err| io::Error::new(io::ErrorKind::InvalidData, err))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(bytes: &[u8]) -> Reader<&[u8]> {
        Reader::new(bytes)
    }

    #[test]
    fn messages_cross_one_per_line() {
        let mut pipe = Vec::new();
        let call = ToTray::Call {
            id: 7,
            cmd: "set_paused".into(),
            args: serde_json::json!({ "paused": true, "note": "two\nlines" }),
        };
        send(&mut pipe, &call).unwrap();
        let reply = ToWindow::Reply {
            id: 7,
            result: Err(IpcError { code: "denied".into(), message: "no".into() }),
        };
        send(&mut pipe, &reply).unwrap();
        send(&mut pipe, &ToWindow::Event { event: UiEvent::TokensChanged }).unwrap();
        assert_eq!(pipe.iter().filter(|&&b| b == b'\n').count(), 3);

        let mut r = reader(&pipe);
        assert_eq!(r.read::<ToTray>().unwrap(), Some(call));
        assert_eq!(r.read::<ToWindow>().unwrap(), Some(reply));
        assert_eq!(
            r.read::<ToWindow>().unwrap(),
            Some(ToWindow::Event { event: UiEvent::TokensChanged })
        );
        assert_eq!(r.read::<ToWindow>().unwrap(), None);
    }

    #[test]
    fn garbage_and_cut_lines_are_errors_not_messages() {
        for bad in [&b"not json\n"[..], b"{\"kind\":\"call\",\"id\":1}\n", b"{\"kind\":\"call\""] {
            let err = reader(bad).read::<ToTray>().unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{bad:?}");
        }
    }

    #[test]
    fn an_overlong_line_is_refused_without_reading_it_all() {
        let mut huge = vec![b' '; MAX_MESSAGE + 10];
        huge.push(b'\n');
        let err = reader(&huge).read::<ToTray>().unwrap_err();
        assert_eq!(err.to_string(), "message too long");
    }
}

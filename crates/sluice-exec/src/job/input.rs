//! Typing into an interactive job: text, named keys and end of input, turned into the bytes a
//! terminal sends (or, for a pipe, what a pipe can carry: Ctrl-C becomes SIGINT to the job's
//! process group and end of input closes the pipe), within the registry's per-write and
//! per-second limits.
//!
//! The engine's end of the input is non-blocking: a program that stops reading fills the
//! terminal's or the pipe's buffer, and a write then gives up after [`WRITE_PATIENCE`] instead
//! of holding the caller (and a thread) for as long as the program sleeps.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::error::ExecError;
use crate::spawn::Interactive;

/// A key a terminal sends as a control character or an escape sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Enter,
    Tab,
    Escape,
    Backspace,
    Up,
    Down,
    Right,
    Left,
    /// Interrupt (SIGINT to the foreground programs).
    CtrlC,
    /// End of input at the start of a line.
    CtrlD,
}

impl Key {
    /// The names [`Key::parse`] accepts, for messages and schemas.
    pub const NAMES: &'static str =
        "enter, tab, escape, backspace, up, down, right, left, ctrl-c, ctrl-d";

    pub fn parse(name: &str) -> Option<Key> {
        Some(match name.to_ascii_lowercase().as_str() {
            "enter" | "return" => Key::Enter,
            "tab" => Key::Tab,
            "escape" | "esc" => Key::Escape,
            "backspace" => Key::Backspace,
            "up" => Key::Up,
            "down" => Key::Down,
            "right" => Key::Right,
            "left" => Key::Left,
            "ctrl-c" | "ctrl+c" | "^c" => Key::CtrlC,
            "ctrl-d" | "ctrl+d" | "^d" => Key::CtrlD,
            _ => return None,
        })
    }

    /// What a terminal (xterm, normal cursor mode) sends for the key.
    fn terminal_bytes(self) -> &'static [u8] {
        match self {
            Key::Enter => b"\r",
            Key::Tab => b"\t",
            Key::Escape => b"\x1b",
            Key::Backspace => b"\x7f",
            Key::Up => b"\x1b[A",
            Key::Down => b"\x1b[B",
            Key::Right => b"\x1b[C",
            Key::Left => b"\x1b[D",
            Key::CtrlC => b"\x03",
            Key::CtrlD => b"\x04",
        }
    }
}

/// One part of a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputPart {
    Text(String),
    Key(Key),
    /// End of input: closes a pipe; on a terminal, Ctrl-D.
    Eof,
}

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputReport {
    /// Bytes the job was sent.
    pub bytes: usize,
    /// The input is now closed (a pipe's end of input); later writes are refused.
    pub closed: bool,
}

/// How long a write waits for a program that does not read its input.
#[cfg(unix)]
const WRITE_PATIENCE: Duration = Duration::from_secs(2);

/// The engine's end of a job's input.
pub(super) enum InputEnd {
    /// The pipe's write end; `None` once the assistant ended the input.
    #[cfg(unix)]
    Pipe(Option<std::os::fd::OwnedFd>),
    /// The terminal's master, shared with the output reader.
    #[cfg(unix)]
    Terminal(std::sync::Arc<std::os::fd::OwnedFd>),
}

/// One step of a write, in order.
enum Step {
    Bytes(Vec<u8>),
    Interrupt,
    Close,
}

/// The bytes (and pipe actions) `parts` mean for `kind`.
fn steps(kind: Interactive, parts: &[InputPart]) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    let push = |bytes: &[u8], out: &mut Vec<Step>| match out.last_mut() {
        Some(Step::Bytes(b)) => b.extend_from_slice(bytes),
        _ => out.push(Step::Bytes(bytes.to_vec())),
    };
    for part in parts {
        match (kind, part) {
            (_, InputPart::Text(t)) => push(t.as_bytes(), &mut out),
            (Interactive::Terminal, InputPart::Key(k)) => push(k.terminal_bytes(), &mut out),
            (Interactive::Terminal, InputPart::Eof) => push(Key::CtrlD.terminal_bytes(), &mut out),
            (Interactive::Pipe, InputPart::Key(Key::Enter)) => push(b"\n", &mut out),
            (Interactive::Pipe, InputPart::Key(Key::CtrlC)) => out.push(Step::Interrupt),
            (Interactive::Pipe, InputPart::Key(Key::CtrlD) | InputPart::Eof) => {
                out.push(Step::Close)
            }
            (Interactive::Pipe, InputPart::Key(k)) => push(k.terminal_bytes(), &mut out),
        }
    }
    out
}

/// Bytes `parts` carry for `kind` (what the limits count).
pub(super) fn size(kind: Interactive, parts: &[InputPart]) -> usize {
    steps(kind, parts)
        .iter()
        .map(|s| match s {
            Step::Bytes(b) => b.len(),
            _ => 0,
        })
        .sum()
}

/// Input sent in the last second, per job.
#[derive(Debug, Default)]
pub(super) struct InputMeter {
    sent: VecDeque<(Instant, usize)>,
}

impl InputMeter {
    /// Takes `n` bytes from this second's allowance, or refuses without taking any.
    pub(super) fn take(&mut self, n: usize, per_second: usize) -> Result<(), ExecError> {
        let now = Instant::now();
        while self
            .sent
            .front()
            .is_some_and(|(t, _)| now.duration_since(*t) >= Duration::from_secs(1))
        {
            self.sent.pop_front();
        }
        let used: usize = self.sent.iter().map(|(_, n)| n).sum();
        if used.saturating_add(n) > per_second {
            return Err(ExecError::InputRate(format!(
                "this job was sent {used} bytes in the last second and takes at most \
                 {per_second} a second; nothing of this write was sent, send it again in a moment"
            )));
        }
        self.sent.push_back((now, n));
        Ok(())
    }
}

/// Carries out `parts` on `end`. `interrupt` sends SIGINT to the job (pipe mode). Returns the
/// bytes written and whether the input is now closed.
#[cfg(unix)]
pub(super) fn write(
    end: &mut InputEnd,
    kind: Interactive,
    parts: &[InputPart],
    interrupt: &dyn Fn() -> bool,
) -> Result<InputReport, ExecError> {
    let deadline = Instant::now() + WRITE_PATIENCE;
    let mut report = InputReport { bytes: 0, closed: false };
    for step in steps(kind, parts) {
        match (step, &mut *end) {
            (Step::Bytes(bytes), InputEnd::Terminal(fd)) => {
                report.bytes += write_within(fd, &bytes, deadline, report.bytes)?;
            }
            (Step::Bytes(bytes), InputEnd::Pipe(Some(fd))) => {
                report.bytes += write_within(fd, &bytes, deadline, report.bytes)?;
            }
            (Step::Interrupt, _) => {
                if !interrupt() {
                    return Err(ExecError::Ended(
                        "the job has ended; nothing more was sent".into(),
                    ));
                }
            }
            (Step::Close, InputEnd::Pipe(fd)) => {
                *fd = None;
                report.closed = true;
            }
            (Step::Close, InputEnd::Terminal(_)) => {}
            (_, InputEnd::Pipe(None)) => {
                return Err(ExecError::Ended(format!(
                    "the job's input was closed (end of input) after {} bytes of this write; \
                     it takes no more",
                    report.bytes
                )));
            }
        }
    }
    Ok(report)
}

/// Writes all of `bytes` to the non-blocking `fd`, waiting for room until `deadline`.
#[cfg(unix)]
fn write_within(
    fd: &std::os::fd::OwnedFd,
    mut bytes: &[u8],
    deadline: Instant,
    before: usize,
) -> Result<usize, ExecError> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    use rustix::io::Errno;
    let total = bytes.len();
    while !bytes.is_empty() {
        match rustix::io::write(fd, bytes) {
            Ok(n) => bytes = &bytes[n.min(bytes.len())..],
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(ExecError::InputNotTaken(format!(
                        "the program is not reading its input: {} of this write's bytes were \
                         sent; read its output, then send the rest",
                        before + total - bytes.len()
                    )));
                }
                let timeout = Timespec::try_from(left).unwrap_or_default();
                let mut fds = [PollFd::new(fd, PollFlags::OUT)];
                let _ = poll(&mut fds, Some(&timeout));
            }
            Err(Errno::PIPE | Errno::IO) => {
                return Err(ExecError::Ended(
                    "the program has closed its input (or ended); nothing more was sent".into(),
                ));
            }
            Err(e) => return Err(ExecError::os("writing to the job's input", e.into())),
        }
    }
    Ok(total)
}

#[cfg(not(unix))]
pub(super) fn write(
    _end: &mut InputEnd,
    _kind: Interactive,
    _parts: &[InputPart],
    _interrupt: &dyn Fn() -> bool,
) -> Result<InputReport, ExecError> {
    Err(ExecError::NotInteractive("interactive jobs need Linux or macOS".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(kind: Interactive, parts: &[InputPart]) -> Vec<u8> {
        steps(kind, parts)
            .into_iter()
            .flat_map(|s| match s {
                Step::Bytes(b) => b,
                Step::Interrupt => b"<INT>".to_vec(),
                Step::Close => b"<EOF>".to_vec(),
            })
            .collect()
    }

    #[test]
    fn keys_are_what_a_terminal_sends_and_a_pipe_gets_signals_and_close() {
        let parts = [
            InputPart::Text("6*7".into()),
            InputPart::Key(Key::Enter),
            InputPart::Key(Key::Up),
            InputPart::Key(Key::CtrlC),
            InputPart::Eof,
        ];
        assert_eq!(bytes(Interactive::Terminal, &parts), b"6*7\r\x1b[A\x03\x04");
        assert_eq!(bytes(Interactive::Pipe, &parts), b"6*7\n\x1b[A<INT><EOF>");
        assert_eq!(size(Interactive::Pipe, &parts), 7);
        assert_eq!(Key::parse("Ctrl-C"), Some(Key::CtrlC));
        assert_eq!(Key::parse("esc"), Some(Key::Escape));
        assert_eq!(Key::parse("f13"), None);
    }

    #[test]
    fn the_meter_refuses_a_second_over_its_allowance_without_taking_it() {
        let mut m = InputMeter::default();
        assert!(m.take(60, 100).is_ok());
        assert!(matches!(m.take(41, 100), Err(ExecError::InputRate(_))));
        assert!(m.take(40, 100).is_ok());
    }
}

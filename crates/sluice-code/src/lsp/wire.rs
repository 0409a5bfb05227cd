//! LSP's framing: `Content-Length` headers, a blank line, then that many bytes of JSON.
//!
//! Written here rather than taken from `lsp-server`: its reader allocates whatever length a
//! header names and reads header lines without a limit, and the server on the other end of a
//! Sluice channel runs the project's code (build scripts, plugins, an interpreter). Every read
//! here is bounded: a header line, the number of headers, and a message.

use std::io::{self, BufRead, Read, Write};

use serde_json::Value;

/// The largest message taken from a server (a project's diagnostics or symbols fit easily).
pub const MAX_MESSAGE: usize = 32 << 20;
const MAX_HEADER_LINE: u64 = 1024;
const MAX_HEADERS: usize = 16;

fn invalid(what: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.into())
}

/// The next message, or `None` at the end of the stream.
pub fn read(r: &mut impl BufRead) -> io::Result<Option<Value>> {
    let mut length = None;
    let mut line = Vec::new();
    for n in 0.. {
        if n > MAX_HEADERS {
            return Err(invalid("more headers than a message has"));
        }
        line.clear();
        if r.by_ref().take(MAX_HEADER_LINE).read_until(b'\n', &mut line)? == 0 {
            return match n {
                0 => Ok(None),
                _ => Err(invalid("the stream ended inside a message's headers")),
            };
        }
        let Some(header) = line.strip_suffix(b"\r\n") else {
            return Err(invalid("a header line is too long or not ended by CRLF"));
        };
        if header.is_empty() {
            break;
        }
        let text = std::str::from_utf8(header).map_err(|_| invalid("a header is not text"))?;
        let Some((name, value)) = text.split_once(':') else {
            return Err(invalid("a header without a colon"));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let n: usize =
                value.trim().parse().map_err(|_| invalid("a Content-Length that is no number"))?;
            length = Some(n);
        }
    }
    let length = length.ok_or_else(|| invalid("a message without Content-Length"))?;
    if length > MAX_MESSAGE {
        return Err(invalid(format!("a message of {length} bytes (at most {MAX_MESSAGE})")));
    }
    let mut body = vec![0; length];
    r.read_exact(&mut body)?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| invalid(format!("a message is not JSON: {e}")))
}

/// Writes one message and flushes it.
pub fn write(w: &mut dyn Write, message: &Value) -> io::Result<()> {
    let body = serde_json::to_vec(message).map_err(io::Error::other)?;
    write!(w, "Content-Length: {}\r\n\r\n", body.len())?;
    w.write_all(&body)?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(bytes: &[u8]) -> io::Result<Option<Value>> {
        read(&mut io::BufReader::new(bytes))
    }

    #[test]
    fn a_message_round_trips_and_the_end_is_none() {
        let mut out = Vec::new();
        write(&mut out, &serde_json::json!({"id": 1, "result": "é"})).expect("write");
        let mut r = io::BufReader::new(&out[..]);
        assert_eq!(read(&mut r).expect("read"), Some(serde_json::json!({"id": 1, "result": "é"})));
        assert!(read(&mut r).expect("end").is_none());
    }

    #[test]
    fn hostile_framing_is_refused_without_allocating_what_it_names() {
        for bad in [
            &b"Content-Length: 99999999999\r\n\r\n{}"[..],
            b"Content-Length: 18446744073709551616\r\n\r\n",
            b"Content-Length: 2\n\n{}",
            b"Content-Length: x\r\n\r\n",
            b"Content-Type: a\r\n\r\n{}",
            b"Content-Length: 10\r\n\r\n{}",
            b"Content-Length: 2\r\n\r\n{x",
            b"Content-Length: 2\r\n",
        ] {
            assert!(one(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        let long = format!("X-{}: 1\r\n\r\n", "a".repeat(5000));
        assert!(one(long.as_bytes()).is_err());
        let many = "X: 1\r\n".repeat(100) + "\r\n";
        assert!(one(many.as_bytes()).is_err());
    }
}

//! Logging to stderr through `tracing`, with every line passed through the secret redactor.
//! Tool arguments and outputs are never logged in the first place; redaction is the backstop.

use std::io::Write;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

struct RedactingStderr;

struct Writer;

impl Write for Writer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(sluice_core::redact::redact(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> MakeWriter<'a> for RedactingStderr {
    type Writer = Writer;

    fn make_writer(&'a self) -> Writer {
        Writer
    }
}

/// Logging for a Sluice process (the CLI, the desktop app): `SLUICE_LOG` sets the filter,
/// `default` applies otherwise. Logs always go to stderr (in stdio mode stdout belongs to the
/// protocol).
pub fn init(default: &str) {
    let filter = std::env::var("SLUICE_LOG")
        .ok()
        .and_then(|s| EnvFilter::try_new(s).ok())
        .unwrap_or_else(|| EnvFilter::new(default))
        // The protocol and HTTP libraries log whole messages (tool arguments, file contents) at
        // debug and trace, and rmcp logs three lines per stateless request at info; only their
        // warnings pass, whatever the user asks for.
        .add_directive("rmcp=warn".parse().expect("static directive"))
        .add_directive("hyper=info".parse().expect("static directive"))
        .add_directive("h2=info".parse().expect("static directive"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(RedactingStderr)
        .with_ansi(false)
        .try_init();
}

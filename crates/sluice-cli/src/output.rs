//! Standard output for every command. `println!` panics, with a backtrace, when the reader has
//! gone away (`sluice token create | head -1`); the CLI writes through [`outln!`] and [`out!`]
//! instead, which then end the process quietly with the status a shell reports for a program
//! its pipe's signal ended (141), as any Unix tool in a pipeline does, on every platform.

use std::fmt;
use std::io::{self, Write};

/// The exit status of a command whose reader went away: 128 + SIGPIPE, as shells report it.
pub const READER_GONE: i32 = 141;

/// Writes `args` (and a newline when `newline`) to standard output, or ends the process.
pub fn write(args: fmt::Arguments<'_>, newline: bool) {
    let mut out = io::stdout().lock();
    let res =
        out.write_fmt(args).and_then(|()| if newline { out.write_all(b"\n") } else { Ok(()) });
    if let Err(err) = res {
        failed(&err);
    }
}

/// Flushes standard output (after a question that waits on the same line), or ends the process.
pub fn flush() {
    if let Err(err) = io::stdout().flush() {
        failed(&err);
    }
}

/// Whether `err`, or an error it wraps, is a write to a pipe nobody reads any more.
pub fn reader_gone(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

fn failed(err: &io::Error) -> ! {
    if err.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(READER_GONE);
    }
    // Standard output is unusable (a full disk, a closed descriptor): say so where we can.
    let _ = writeln!(io::stderr(), "sluice: cannot write the output: {err}");
    std::process::exit(1);
}

/// `println!` that ends the process quietly when the reader has gone away.
macro_rules! outln {
    () => {
        $crate::output::write(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*), true)
    };
}

/// `print!` that ends the process quietly when the reader has gone away.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*), false)
    };
}

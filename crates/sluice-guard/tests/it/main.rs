//! Integration tests for the path sandbox, the shield and the auto-run list, against real temp
//! dirs and links.

mod autorun;
mod relpath;
// Its fixtures are Unix symlinks and FIFOs; on Windows, creating a symlink needs developer mode
// or an administrator, so `Root`'s Windows walk is not exercised here.
#[cfg(unix)]
mod root;
// Random trees of Unix links.
#[cfg(unix)]
mod properties;
mod shield;

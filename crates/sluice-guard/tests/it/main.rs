//! Integration tests for the path sandbox, the shield and the auto-run list, against real temp
//! dirs and links.

mod autorun;
mod relpath;
mod root;
mod shield;

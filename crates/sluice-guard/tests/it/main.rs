//! Integration tests for the path sandbox and the shield, against real temp dirs and links.

mod relpath;
mod root;
mod shield;

//! The bodies of Sluice's fuzz targets, one `pub fn <target>(data: &[u8])` each.
//!
//! They live in a workspace crate, not in `fuzz/` (cargo-fuzz's own package, built only on
//! nightly), for two reasons: `fuzz/fuzz_targets/<target>.rs` stays a one-line `fuzz_target!`,
//! and the ordinary test `tests/it` replays every committed input of `fuzz/corpus/<target>/`
//! through the very same function on stable Rust, so `cargo test --workspace` (CI) keeps every
//! seed and every crash ever found passing. `cargo xtask fuzz` runs the targets themselves.
//!
//! Each function panics exactly when a property is violated (or the code under test panics):
//! a panic on any input is a defect, because bad input must come back as an error.

mod command;
mod config;
mod media;
mod patch;
mod paths;
mod redact;
mod text;
mod tool_args;

pub use command::command_classifier;
pub use config::config_edit;
pub use media::image_decode;
pub use patch::patch;
pub use paths::{path_parse, path_resolve};
pub use redact::{ansi_strip, redact_stream};
pub use text::visible_text;
pub use tool_args::tool_arguments;

/// A target's body: panics exactly when the input breaks a property.
pub type Target = fn(&[u8]);

/// Every target by name, as `fuzz/fuzz_targets/<name>.rs` and `fuzz/corpus/<name>/` call it.
pub const TARGETS: &[(&str, Target)] = &[
    ("path_parse", path_parse),
    ("path_resolve", path_resolve),
    ("patch", patch),
    ("tool_arguments", tool_arguments),
    ("command_classifier", command_classifier),
    ("redact_stream", redact_stream),
    ("ansi_strip", ansi_strip),
    ("visible_text", visible_text),
    ("config_edit", config_edit),
    ("image_decode", image_decode),
];

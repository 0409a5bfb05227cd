//! Integration tests of sluice-exec with real processes. Attacks from docs/THREATS.md are named
//! after their ids.

#[cfg(target_os = "linux")]
mod exposure;
mod interactive;
#[cfg(target_os = "linux")]
mod jail;
mod jobs;
mod output;
mod policy;
#[cfg(target_os = "linux")]
mod ports;
mod sandbox;
#[cfg(target_os = "linux")]
mod shield;
mod support;
mod tree;

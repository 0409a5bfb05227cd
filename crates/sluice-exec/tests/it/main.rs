//! Integration tests of sluice-exec with real processes. Attacks from SECURITY-CASES are named
//! after their ids.

mod jobs;
mod output;
mod policy;
mod sandbox;
mod support;
mod tree;

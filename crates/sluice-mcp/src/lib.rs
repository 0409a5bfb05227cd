//! Sluice's MCP server: the only crate that speaks MCP. [`http`] is the hardened Streamable
//! HTTP front door, [`server`] the tool surface, [`stdio`] the bridge that lets stdio-only
//! clients reach the running engine through the same front door.

#[doc(hidden)]
pub mod arguments;
pub mod check;
mod checkpoint;
mod cimd;
mod code;
mod code_server;
mod direct;
pub mod dto;
mod exec;
mod git_hooks;
mod git_write;
pub mod http;
mod job_wire;
pub mod limits;
mod live;
mod media;
mod openai;
mod peek;
mod ports;
mod profile;
mod progress;
pub mod reach;
mod reach_owner;
pub mod server;
pub mod stdio;
mod task_results;
mod tasks;
mod tunnel;
mod worktree;
mod write;

pub use http::{BindError, bind, router, runtime, serve};
pub use limits::Limits;
pub use reach_owner::serve_reach;

//! The window's commands over a real engine in a temp folder, and the freshness of the
//! generated TypeScript bindings.

mod approvals;
mod bindings;
mod commands;
mod connect;
mod dispatch;
mod jobs;
mod reach;

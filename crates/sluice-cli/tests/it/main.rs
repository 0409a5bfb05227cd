//! End-to-end tests of the real `sluice` binary: real SQLite files in temp folders, a real
//! server on loopback, raw HTTP for the attacks, and MCP clients written by others (the Python
//! SDK) over HTTP and `sluice stdio`.

// The red-team rig: /proc, setpriv, symlinks, abstract sockets and Linux's job sandbox.
mod at_rest;
#[cfg(target_os = "linux")]
mod attack;
mod autorun;
mod changes;
// File modes and a generator run in the Linux job sandbox.
#[cfg(unix)]
mod checkpoints;
mod cli;
mod client_clis;
mod code_intel;
mod code_server;
mod connect;
mod exec;
mod exec_live;
mod exec_tools;
mod git_emails;
#[cfg(unix)]
mod git_hooks;
mod git_writes;
// kill -9, tmpfs mounts and /proc: Linux.
#[cfg(target_os = "linux")]
mod faults;
mod harness;
mod http_guards;
// A Secret Service on a private D-Bus session: Linux only.
#[cfg(target_os = "linux")]
mod keychain;
mod node_clients;
mod pipes;
mod profiles;
mod python_client;
// Tunnels in process groups, /proc, and (CIMD) a network namespace: Linux only.
#[cfg(target_os = "linux")]
mod reach;
#[cfg(target_os = "linux")]
mod reach_authority;
#[cfg(target_os = "linux")]
mod reach_cimd;
#[cfg(target_os = "linux")]
mod reach_openai;
mod resilience;
mod sandbox;
mod slow;
mod tasks;
// The Windows sandbox account, set up for real: Windows, as an administrator.
#[cfg(windows)]
mod winsandbox;
mod worktrees;

//! End-to-end tests of the real `sluice` binary: real SQLite files in temp folders, a real
//! server on loopback, raw HTTP for the attacks, and MCP clients written by others (the Python
//! SDK) over HTTP and `sluice stdio`.

mod attack;
mod autorun;
mod changes;
mod cli;
mod client_clis;
mod connect;
mod exec;
mod exec_tools;
mod faults;
mod harness;
mod http_guards;
// A Secret Service on a private D-Bus session: Linux only.
#[cfg(target_os = "linux")]
mod keychain;
mod node_clients;
mod python_client;
mod resilience;
mod sandbox;
mod tasks;

//! Integration tests for the file tools over real temp folders, real links and a real race.

// The rig's fixtures are Unix symlinks (and FIFOs, modes, inodes); on Windows, where creating
// a symlink needs developer mode or an administrator, only the schema tests are built.
#[cfg(unix)]
mod attacks;
#[cfg(unix)]
mod autorun;
#[cfg(unix)]
mod checkpoint;
mod concurrent;
#[cfg(unix)]
mod media;
#[cfg(unix)]
mod mutate;
#[cfg(unix)]
mod properties;
#[cfg(unix)]
mod race;
#[cfg(unix)]
mod rig;
mod schema;
#[cfg(unix)]
mod search;
#[cfg(unix)]
mod tools;

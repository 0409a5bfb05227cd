//! A job's first process as the spawn made it: a `std` child, or on Windows a process started
//! as the sandbox account, which `std` cannot make ([`crate::winsandbox::process`]). The
//! supervisor waits for it, polls it and kills it the same way either way.

use std::io;
use std::process::Child;

/// How the leader ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exit {
    pub code: Option<i32>,
    /// The signal that ended it (Unix).
    pub signal: Option<i32>,
}

/// A job's first process.
#[derive(Debug)]
pub enum Leader {
    Std(Child),
    /// Windows: started as the sandbox account.
    #[cfg(windows)]
    Account(crate::winsandbox::process::AccountProcess),
}

impl Leader {
    pub fn id(&self) -> u32 {
        match self {
            Leader::Std(child) => child.id(),
            #[cfg(windows)]
            Leader::Account(p) => p.pid,
        }
    }

    /// Waits for the end (and reaps it, on Unix).
    pub fn wait(&mut self) -> io::Result<Exit> {
        match self {
            Leader::Std(child) => child.wait().map(|s| exit_of(&s)),
            #[cfg(windows)]
            Leader::Account(p) => p.wait().map(account_exit),
        }
    }

    /// How it ended, if it has.
    pub fn try_wait(&mut self) -> io::Result<Option<Exit>> {
        match self {
            Leader::Std(child) => child.try_wait().map(|s| s.as_ref().map(exit_of)),
            #[cfg(windows)]
            Leader::Account(p) => p.try_wait().map(|c| c.map(account_exit)),
        }
    }

    /// Ends it (the tree's kill ends the rest: [`crate::kill`]).
    pub fn kill(&mut self) -> io::Result<()> {
        match self {
            Leader::Std(child) => child.kill(),
            #[cfg(windows)]
            Leader::Account(p) => p.kill(),
        }
    }

    /// The `std` child: the only kind there is off Windows.
    #[cfg(not(windows))]
    pub fn child(&mut self) -> &mut Child {
        let Leader::Std(child) = self;
        child
    }
}

fn exit_of(status: &std::process::ExitStatus) -> Exit {
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(status);
    #[cfg(not(unix))]
    let signal = None;
    Exit { code: status.code(), signal }
}

/// An exit code as `std` reports Windows' (the 32 bits, read as signed).
#[cfg(windows)]
fn account_exit(code: u32) -> Exit {
    Exit { code: Some(code as i32), signal: None }
}

//! What holds for a Windows job, from what the machine has of the sandbox's setup: the sandbox
//! users, their rules on files, the firewall's rules, and the password jobs log on with. The
//! sentences here are what `sluice doctor`, the window's Settings and an
//! approval card show (through [`crate::confine::confinement`]'s summary and
//! [`crate::confine::guarantees`]), so each says exactly what is so.

use crate::confine::{Enforcement, Guarantee, LandlockReport};

/// One part of the setup, found missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// The local account `SluiceSandbox` (jobs without network) does not exist.
    OfflineUser,
    /// The local account `SluiceSandboxNet` (jobs with network) does not exist.
    OnlineUser,
    /// Sluice does not hold the accounts' password (it cannot start a process as them).
    Password,
    /// Some credential store that exists lacks its deny rule (it appeared after the setup, or
    /// the rule was removed): the count.
    StoreRules(usize),
    /// The firewall rules that take the offline account's network are absent or changed.
    Firewall,
}

impl Missing {
    /// The missing part, as a phrase for the summary.
    pub fn phrase(self) -> String {
        match self {
            Missing::OfflineUser => "the account SluiceSandbox does not exist".into(),
            Missing::OnlineUser => "the account SluiceSandboxNet does not exist".into(),
            Missing::Password => "Sluice does not hold the sandbox accounts' password".into(),
            Missing::StoreRules(1) => "1 credential store has no deny rule".into(),
            Missing::StoreRules(n) => format!("{n} credential stores have no deny rule"),
            Missing::Firewall => "the firewall rules blocking SluiceSandbox's network are absent \
                                  or changed"
                .into(),
        }
    }
}

/// What the machine has of the setup, as measured (`os.rs` on Windows).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetupState {
    pub offline_user: bool,
    pub online_user: bool,
    pub password: bool,
    /// Credential stores present here without their deny rule.
    pub stores_without_rule: usize,
    pub firewall: bool,
}

/// Whether the sandbox holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WinSandboxStatus {
    /// Every part is in place: jobs run as the sandbox user.
    SetUp,
    /// Nothing of it is on this machine.
    NotSetUp,
    /// Some parts are, these are not: jobs run as the user.
    Partial(Vec<Missing>),
}

impl WinSandboxStatus {
    /// The status of `state`.
    pub fn of(state: &SetupState) -> WinSandboxStatus {
        let mut missing = Vec::new();
        if !state.offline_user {
            missing.push(Missing::OfflineUser);
        }
        if !state.online_user {
            missing.push(Missing::OnlineUser);
        }
        if !state.password {
            missing.push(Missing::Password);
        }
        if state.stores_without_rule > 0 {
            missing.push(Missing::StoreRules(state.stores_without_rule));
        }
        if !state.firewall {
            missing.push(Missing::Firewall);
        }
        let nothing = !state.offline_user && !state.online_user && !state.firewall;
        match missing.as_slice() {
            [] => WinSandboxStatus::SetUp,
            _ if nothing => WinSandboxStatus::NotSetUp,
            _ => WinSandboxStatus::Partial(missing),
        }
    }

    /// Whether jobs run as the sandbox user, with its file and firewall rules.
    pub fn holds(&self) -> bool {
        *self == WinSandboxStatus::SetUp
    }

    /// The sentence every surface shows.
    pub fn summary(&self) -> String {
        const AS_YOU: &str = "jobs run as you, in a Job Object that ends their whole process \
                              tree but hides nothing: they can read what you can read, your \
                              credential stores included, and reach the network";
        match self {
            WinSandboxStatus::SetUp => "jobs run as the sandbox account SluiceSandbox \
                (SluiceSandboxNet when the project's network is on), in a Job Object: they read \
                the project and the toolchains, not your profile, your credential stores or \
                Sluice's data, and write only in the project, their private folders and where \
                every local account may; the firewall blocks every address but loopback for \
                projects whose network is off or registries"
                .into(),
            WinSandboxStatus::NotSetUp => {
                format!("the Windows sandbox account is not set up here: {AS_YOU}")
            }
            WinSandboxStatus::Partial(missing) => {
                let parts: Vec<String> = missing.iter().map(|m| m.phrase()).collect();
                format!("the Windows sandbox is not complete ({}): {AS_YOU}", parts.join("; "))
            }
        }
    }

    /// The report the surfaces and the spawn read ([`crate::confine`]): fully enforced only
    /// when every part holds, then with network rules.
    pub fn report(&self) -> LandlockReport {
        let holds = self.holds();
        LandlockReport {
            status: if holds { Enforcement::FullyEnforced } else { Enforcement::NotEnforced },
            abi: None,
            network_rules: holds,
            namespaces: false,
            summary: self.summary(),
        }
    }
}

/// What holds for a Windows job, by whether the sandbox holds (`set_up`).
pub fn guarantees(set_up: bool) -> Vec<Guarantee> {
    let g = |what, holds| Guarantee { what, holds };
    vec![
        g("your profile, Sluice's data folder and the hidden credential stores unreadable", set_up),
        g(
            "writes only in the project, the job's private folders and where every local \
             account may write (Public, ProgramData)",
            set_up,
        ),
        g("your own processes out of the job's reach (another account)", set_up),
        g("network off means no connection out but to loopback", set_up),
        g("the whole process tree ends with the job (Job Object)", true),
        g("the rest of the machine out of sight (what every local account may read)", false),
        g("files the project's shield hides covered", false),
        g("no named pipe or socket of the machine's other programs", false),
    ]
}

//! The Windows Firewall rules that take the network from the offline sandbox user, as data: the
//! fields of a rule (those of COM's `INetFwRule3`), and the PowerShell that adds, checks and
//! removes them (`New-NetFirewallRule`, whose `-LocalUser` sets `LocalUserAuthorizedList`, the
//! field that scopes a rule to one account; `netsh advfirewall` has no such parameter, so it
//! cannot make these rules).
//!
//! Windows Firewall gives precedence to a block rule over any allow rule, so there is no
//! "allow only this": the block rules list every address but loopback (`127.0.0.0/8`, `::1`),
//! and nothing else is needed. A `registries` job runs as the offline user and reaches the
//! registries only through Sluice's proxy on `127.0.0.1`; an `off` job reaches loopback too (its
//! own test servers, and — unlike in a Linux network namespace — the machine's loopback
//! services). An `on` job runs as the online user, whom no rule names.

use base64::Engine as _;

use super::{Sid, WinSandboxError};

/// The two sandbox accounts: one without network, one with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SandboxUser {
    /// Jobs of projects whose network is `off` or `registries`.
    Offline,
    /// Jobs of projects whose network is `on`.
    Online,
}

impl SandboxUser {
    pub const ALL: [SandboxUser; 2] = [SandboxUser::Offline, SandboxUser::Online];

    /// The local account's name.
    pub fn name(self) -> &'static str {
        match self {
            SandboxUser::Offline => "SluiceSandbox",
            SandboxUser::Online => "SluiceSandboxNet",
        }
    }

    /// The account a job of this network runs as.
    pub fn for_network(network: &crate::Network) -> SandboxUser {
        match network {
            crate::Network::Off | crate::Network::Registries(_) => SandboxUser::Offline,
            crate::Network::Allowed => SandboxUser::Online,
        }
    }
}

/// Which way a rule filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Outbound,
}

/// What a rule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Block,
    Allow,
}

/// One rule, field by field as `INetFwRule3` has them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirewallRule {
    /// `Name`: Sluice's, so it finds and replaces its own rules.
    pub name: &'static str,
    pub description: &'static str,
    pub direction: Direction,
    pub action: Action,
    /// `Protocol`: every protocol (TCP, UDP, ICMP, …).
    pub any_protocol: bool,
    /// `RemoteAddresses`, as ranges.
    pub remote_addresses: &'static [&'static str],
    /// `LocalUserAuthorizedList`: the one account the rule applies to, as SDDL.
    pub local_user: String,
}

/// Every IPv4 address but `127.0.0.0/8`.
pub const IPV4_BUT_LOOPBACK: &[&str] = &["0.0.0.0-126.255.255.255", "128.0.0.0-255.255.255.255"];
/// Every IPv6 address but `::1` (IPv4-mapped loopback, `::ffff:127.0.0.1`, is blocked too).
pub const IPV6_BUT_LOOPBACK: &[&str] = &["::-::0", "::2-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"];

/// The rules for `user`, whose SID is `sid`: for the offline user, block every protocol to every
/// address but loopback, IPv4 and IPv6; for the online user, none.
pub fn rules(user: SandboxUser, sid: &Sid) -> Vec<FirewallRule> {
    if user == SandboxUser::Online {
        return Vec::new();
    }
    let local_user = format!("O:LSD:(A;;CC;;;{})", sid.as_str());
    let block = |name, remote_addresses| FirewallRule {
        name,
        description: "Sluice: jobs of projects whose network is off or registries reach no \
                      address but loopback",
        direction: Direction::Outbound,
        action: Action::Block,
        any_protocol: true,
        remote_addresses,
        local_user: local_user.clone(),
    };
    vec![
        block("Sluice-Sandbox-Block-IPv4", IPV4_BUT_LOOPBACK),
        block("Sluice-Sandbox-Block-IPv6", IPV6_BUT_LOOPBACK),
    ]
}

/// A PowerShell string literal: single-quoted, quotes doubled. Refuses control characters and
/// PowerShell's other quote characters (`‘’‚‛`), which it also reads as single quotes.
fn ps_quote(text: &str) -> Result<String, WinSandboxError> {
    if text.chars().any(|c| c.is_control() || matches!(c, '\u{2018}'..='\u{201b}')) {
        return Err(WinSandboxError::Refused(
            "a firewall rule's value has characters PowerShell would read otherwise".into(),
        ));
    }
    Ok(format!("'{}'", text.replace('\'', "''")))
}

/// The script that replaces Sluice's rules with `rules` (each removed if present, then added).
pub fn add_script(rules: &[FirewallRule]) -> Result<String, WinSandboxError> {
    let mut out = String::from("$ErrorActionPreference = 'Stop'\n");
    for r in rules {
        let addresses: Vec<String> =
            r.remote_addresses.iter().map(|a| ps_quote(a)).collect::<Result<_, _>>()?;
        let name = ps_quote(r.name)?;
        out.push_str(&format!(
            "Remove-NetFirewallRule -Name {name} -ErrorAction SilentlyContinue\n\
             New-NetFirewallRule -Name {name} -DisplayName {name} -Description {} \
             -Direction {} -Action {} -Protocol {} -RemoteAddress @({}) -LocalUser {} \
             -Profile Any -Enabled True | Out-Null\n",
            ps_quote(r.description)?,
            match r.direction {
                Direction::Outbound => "Outbound",
            },
            match r.action {
                Action::Block => "Block",
                Action::Allow => "Allow",
            },
            if r.any_protocol { "Any" } else { "TCP" },
            addresses.join(","),
            ps_quote(&r.local_user)?,
        ));
    }
    Ok(out)
}

/// The script that exits 0 when every rule of `rules` is present and enabled, blocks, and
/// names the same account; 1 otherwise.
pub fn check_script(rules: &[FirewallRule]) -> Result<String, WinSandboxError> {
    let mut out = String::from("$ok = $true\n");
    for r in rules {
        out.push_str(&format!(
            "$r = Get-NetFirewallRule -Name {} -ErrorAction SilentlyContinue\n\
             if (-not $r -or $r.Enabled -ne 'True' -or $r.Action -ne 'Block' -or \
             ($r | Get-NetFirewallSecurityFilter).LocalUser -ne {}) {{ $ok = $false }}\n",
            ps_quote(r.name)?,
            ps_quote(&r.local_user)?,
        ));
    }
    out.push_str("if ($ok) { exit 0 } else { exit 1 }\n");
    Ok(out)
}

/// The script that removes every rule Sluice adds (undoing the setup).
pub fn remove_script() -> String {
    "Remove-NetFirewallRule -Name 'Sluice-Sandbox-Block-IPv4','Sluice-Sandbox-Block-IPv6' \
     -ErrorAction SilentlyContinue\n"
        .to_owned()
}

/// PowerShell's arguments for running `script`: no profile, no prompt, the script as
/// `-EncodedCommand` (base64 of UTF-16LE), so no part of it is parsed as a command line.
pub fn powershell_args(script: &str) -> Vec<String> {
    let utf16: Vec<u8> = script.encode_utf16().flat_map(u16::to_le_bytes).collect();
    vec![
        "-NoLogo".into(),
        "-NoProfile".into(),
        "-NonInteractive".into(),
        "-ExecutionPolicy".into(),
        "Bypass".into(),
        "-EncodedCommand".into(),
        base64::engine::general_purpose::STANDARD.encode(utf16),
    ]
}

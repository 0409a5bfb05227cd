//! The states and codes of a client's connection to Sluice ([`crate::clients_health`]): stable
//! words that `sluice connect --status --json`, scripts and the window (as the TypeScript
//! unions `HealthState` and `HealthCode`) branch on.

/// The state of one client's connection to Sluice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HealthState {
    /// Neither the config file nor its folder exists.
    NotInstalled,
    /// The client is there, but its file has no Sluice entry.
    NotConfigured,
    /// A real MCP call with the entry's own credential worked.
    Working,
    /// The entry points at the running Sluice, but the client keeps the token itself, so
    /// Sluice cannot make the call the client would make.
    Unverified,
    /// The entry cannot work; `code` says why.
    Broken,
    /// Sluice is not running: nothing was checked that needs it.
    NotRunning,
}

impl HealthState {
    /// Every state, in declaration order.
    pub const ALL: &'static [HealthState] = &[
        HealthState::NotInstalled,
        HealthState::NotConfigured,
        HealthState::Working,
        HealthState::Unverified,
        HealthState::Broken,
        HealthState::NotRunning,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            HealthState::NotInstalled => "not_installed",
            HealthState::NotConfigured => "not_configured",
            HealthState::Working => "working",
            HealthState::Unverified => "unverified",
            HealthState::Broken => "broken",
            HealthState::NotRunning => "not_running",
        }
    }
}

/// Why one client's entry is in its state: the state's own name, or why it is broken. Stable
/// (scripts, `sluice connect --status --json`, the window's union `HealthCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HealthCode {
    /// Neither the config file nor its folder exists.
    NotInstalled,
    /// The client's file has no Sluice entry.
    NotConfigured,
    /// A real MCP call with the entry's own credential worked.
    Working,
    /// The client keeps the token itself: only the port was checked.
    Unverified,
    /// The entry cannot work (only as a state; a broken entry's code says why).
    Broken,
    /// Sluice is not running: nothing was checked that needs it.
    NotRunning,
    /// The entry points at another port than the one Sluice serves on.
    PortChanged,
    /// Sluice refused the entry's token.
    TokenRejected,
    /// The stdio entry's program is gone.
    BinaryMissing,
    /// The stdio entry runs a Sluice other than this one.
    OtherBinary,
    /// The keychain holds no token for the entry's connection.
    ConnectionTokenMissing,
    /// The file is not valid in its format, or not shaped as the client expects.
    ConfigInvalid,
    /// The file cannot be read at all.
    ConfigUnreadable,
    /// The entry sends no token.
    NoToken,
    /// The entry under Sluice's name runs something that is not Sluice's bridge.
    NotSluice,
    /// The MCP call failed for another reason (the reason says which).
    CheckFailed,
    /// The entry works as far as Sluice can tell; the client keeps its token.
    TokenKeptByClient,
}

impl HealthCode {
    /// Every code, in declaration order.
    pub const ALL: &'static [HealthCode] = &[
        HealthCode::NotInstalled,
        HealthCode::NotConfigured,
        HealthCode::Working,
        HealthCode::Unverified,
        HealthCode::Broken,
        HealthCode::NotRunning,
        HealthCode::PortChanged,
        HealthCode::TokenRejected,
        HealthCode::BinaryMissing,
        HealthCode::OtherBinary,
        HealthCode::ConnectionTokenMissing,
        HealthCode::ConfigInvalid,
        HealthCode::ConfigUnreadable,
        HealthCode::NoToken,
        HealthCode::NotSluice,
        HealthCode::CheckFailed,
        HealthCode::TokenKeptByClient,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            HealthCode::NotInstalled => "not_installed",
            HealthCode::NotConfigured => "not_configured",
            HealthCode::Working => "working",
            HealthCode::Unverified => "unverified",
            HealthCode::Broken => "broken",
            HealthCode::NotRunning => "not_running",
            HealthCode::PortChanged => "port_changed",
            HealthCode::TokenRejected => "token_rejected",
            HealthCode::BinaryMissing => "binary_missing",
            HealthCode::OtherBinary => "other_binary",
            HealthCode::ConnectionTokenMissing => "connection_token_missing",
            HealthCode::ConfigInvalid => "config_invalid",
            HealthCode::ConfigUnreadable => "config_unreadable",
            HealthCode::NoToken => "no_token",
            HealthCode::NotSluice => "not_sluice",
            HealthCode::CheckFailed => "check_failed",
            HealthCode::TokenKeptByClient => "token_kept_by_client",
        }
    }
}

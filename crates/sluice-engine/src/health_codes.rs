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

sluice_core::str_enum!(HealthState {
    NotInstalled = "not_installed",
    NotConfigured = "not_configured",
    Working = "working",
    Unverified = "unverified",
    Broken = "broken",
    NotRunning = "not_running",
});

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

sluice_core::str_enum!(HealthCode {
    NotInstalled = "not_installed",
    NotConfigured = "not_configured",
    Working = "working",
    Unverified = "unverified",
    Broken = "broken",
    NotRunning = "not_running",
    PortChanged = "port_changed",
    TokenRejected = "token_rejected",
    BinaryMissing = "binary_missing",
    OtherBinary = "other_binary",
    ConnectionTokenMissing = "connection_token_missing",
    ConfigInvalid = "config_invalid",
    ConfigUnreadable = "config_unreadable",
    NoToken = "no_token",
    NotSluice = "not_sluice",
    CheckFailed = "check_failed",
    TokenKeptByClient = "token_kept_by_client",
});

//! The socket pair over which a job's proxy listener (`registries` network) comes out of its
//! network namespace to the engine, which serves the proxy on it ([`crate::egress`]).

use std::os::fd::OwnedFd;

use crate::error::ExecError;

/// The socket pair over which a job's proxy listener comes from its network namespace
/// ([`crate::jail`] sends it before exec; both ends are close-on-exec).
pub(super) struct ProxyChannel {
    engine: OwnedFd,
    pub(super) job: OwnedFd,
}

impl ProxyChannel {
    pub(super) fn new() -> Result<ProxyChannel, ExecError> {
        let (engine, job) = crate::fdpass::seqpacket_pair()
            .map_err(|e| ExecError::os("preparing the job's proxy", e))?;
        Ok(ProxyChannel { engine, job })
    }

    /// The listener the job's side sent before its exec (so it is there once spawn returned).
    pub(super) fn receive(self) -> std::io::Result<OwnedFd> {
        drop(self.job);
        crate::fdpass::receive_waiting_fd(&self.engine)
            .map_err(|_| std::io::Error::other("the job sent no proxy listener"))
    }

    /// The engine's end, for a channel that carries more than one descriptor (the port keeper
    /// of [`crate::publish`]); the job's end is closed.
    pub(super) fn into_engine_end(self) -> OwnedFd {
        drop(self.job);
        self.engine
    }
}

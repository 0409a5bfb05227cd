//! How a long-running Sluice (`sluice serve`, the tray process) hears that it should stop:
//! SIGTERM or Ctrl-C, so that it can write the audit entries still queued and forget its port
//! before it exits.

/// Installs the SIGTERM and Ctrl-C handlers now (creating a listener registers it) and resolves
/// when one of them fires. Without a handler the signal stops the engine the hard way.
pub fn signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let listeners = signal(SignalKind::terminate())
            .and_then(|term| signal(SignalKind::interrupt()).map(|interrupt| (term, interrupt)));
        async move {
            match listeners {
                Ok((mut term, mut interrupt)) => {
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = interrupt.recv() => {}
                    }
                }
                Err(err) => {
                    tracing::warn!(%err, "cannot listen for signals; stop Sluice by closing it");
                    std::future::pending::<()>().await;
                }
            }
        }
    }
    #[cfg(windows)]
    {
        let listener = tokio::signal::windows::ctrl_c();
        async move {
            match listener {
                Ok(mut ctrl_c) => {
                    ctrl_c.recv().await;
                }
                Err(err) => {
                    tracing::warn!(%err, "cannot listen for Ctrl-C; stop Sluice by closing it");
                    std::future::pending::<()>().await;
                }
            }
        }
    }
}

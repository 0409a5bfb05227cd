//! The calling client's progress channel, for tools that wait for the user's approval.

use rmcp::RoleServer;
use sluice_core::Failure;
use sluice_engine::Engine;

/// The calling client's channel for progress: while an approval waits for the user, a client
/// that sent a progress token hears about it (and its request does not time out). Only tools
/// that are not read-only may take one: read-only calls can be served by the HTTP direct path,
/// whose peer reaches no client (`direct.rs`).
pub(crate) struct Progress {
    pub(crate) peer: rmcp::Peer<RoleServer>,
    pub(crate) meta: rmcp::model::RequestMetaObject,
}

impl Progress {
    /// [`Engine::ask`], reporting the wait to the client as `notifications/progress`.
    pub(crate) async fn ask(
        self,
        engine: &Engine,
        request: sluice_engine::AskRequest<'_>,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<sluice_engine::AskOutcome, Failure> {
        self.ask_change(engine, request, Vec::new(), cancel).await
    }

    /// [`Engine::ask_change`]: [`Progress::ask`] for a change naming the auto-run paths it
    /// touches.
    pub(crate) async fn ask_change(
        self,
        engine: &Engine,
        request: sluice_engine::AskRequest<'_>,
        autorun: Vec<sluice_core::AutoRunHit>,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<sluice_engine::AskOutcome, Failure> {
        let token = self.meta.get_progress_token();
        let peer = self.peer;
        let summary = request.summary.clone();
        engine
            .ask_change(request, autorun, cancel, move |waited: std::time::Duration| {
                if let Some(token) = token.clone() {
                    let peer = peer.clone();
                    let param =
                        rmcp::model::ProgressNotificationParam::new(token, waited.as_secs_f64())
                            .with_message(format!("waiting for the user to approve: {summary}"));
                    tokio::spawn(async move {
                        let _ = peer.notify_progress(param).await;
                    });
                }
            })
            .await
    }
}

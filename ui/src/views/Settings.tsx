// Settings: where Sluice listens and keeps its data, the secret's storage, the access state.

import type { AppState } from "../bindings/ipc";
import { Text } from "../components";

export function SettingsView({ state }: { state: AppState | null }) {
  if (!state) return null;
  return (
    <section aria-label="Settings">
      <h1>Settings</h1>
      <dl className="settings">
        <dt>MCP endpoint</dt>
        <dd>
          <Text mono>{state.mcpUrl}</Text>
          <p className="muted">
            Port {state.port} on this computer only. Set SLUICE_PORT before starting Sluice to
            change it.
          </p>
        </dd>
        <dt>AI access</dt>
        <dd>{state.paused ? "Paused — every request is refused" : "On"}</dd>
        <dt>Data folder</dt>
        <dd>
          <Text mono>{state.dataDir}</Text>
        </dd>
        <dt>Install secret</dt>
        <dd>
          {state.secret.inKeychain ? (
            <>
              In the system keychain (<Text>{state.secret.location}</Text>)
            </>
          ) : (
            <>
              In an owner-only file: <Text mono>{state.secret.location}</Text>
              {state.secret.reason && (
                <p className="muted">
                  Not in the keychain because: <Text>{state.secret.reason}</Text>
                </p>
              )}
            </>
          )}
        </dd>
        <dt>Version</dt>
        <dd>{state.version}</dd>
      </dl>
    </section>
  );
}

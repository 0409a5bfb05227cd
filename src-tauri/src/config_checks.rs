//! Checks of the app's configuration: the ACL, the CSP and the capabilities.

mod acl {
    #[test]
    fn the_acl_names_every_command_the_bindings_declare() {
        let declared: Vec<&str> = ipc::bindings::COMMANDS.iter().map(|c| c.0).collect();
        assert_eq!(crate::command_names::COMMAND_NAMES, declared.as_slice());
        let caps = include_str!("../capabilities/main.json");
        for name in declared {
            let permission = format!("\"allow-{}\"", name.replace('_', "-"));
            assert!(caps.contains(&permission), "capabilities/main.json lacks {permission}");
        }
    }

    use sluice_ipc as ipc;
}

mod security_config {
    //! docs/THREATS.md UI-02..04 as configuration checks: a strict CSP, a frozen prototype,
    //! capabilities for the main window only, no shell or fs plugin, no remote URLs.

    fn json(text: &str) -> serde_json::Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn ui02_the_window_shows_only_its_own_pages() {
        let own = |u: &str| crate::webview::is_own_page(&tauri::Url::parse(u).unwrap());
        for u in
            ["tauri://localhost/", "tauri://localhost/index.html#jobs", "http://tauri.localhost/"]
        {
            assert!(own(u), "{u}");
        }
        for u in [
            "https://evil.example/",
            "http://localhost.evil.com/",
            "http://tauri.localhost.evil.com/",
            "http://evil.com@tauri.localhost.evil.com/",
            "tauri://evil/",
            "tauri://localhost:1/",
            "http://tauri.localhost:8080/",
            "file:///etc/passwd",
            "data:text/html,<script>alert(1)</script>",
            "javascript:alert(1)",
            "about:blank",
            "http://127.0.0.1:7457/mcp",
            "blob:tauri://localhost/x",
        ] {
            assert!(!own(u), "{u}");
        }
    }

    #[test]
    fn ui03_csp_is_strict_and_the_prototype_frozen() {
        let conf = json(include_str!("../../tauri.conf.json"));
        let security = &conf["app"]["security"];
        assert_eq!(security["csp"]["script-src"], "'self'");
        assert_eq!(security["freezePrototype"], true);
        let csp = security["csp"].to_string();
        for bad in ["unsafe-inline", "unsafe-eval", "http://", "https://"] {
            let allowed_ipc = csp.replace("http://ipc.localhost", "");
            assert!(!allowed_ipc.contains(bad), "CSP allows {bad}: {csp}");
        }
        assert!(security.get("dangerousDisableAssetCspModification").is_none());
    }

    #[test]
    fn ui04_capabilities_grant_only_what_the_window_needs() {
        let caps = json(include_str!("../capabilities/main.json"));
        assert_eq!(caps["windows"], serde_json::json!(["main"]));
        assert!(caps.get("remote").is_none(), "no remote URLs may reach IPC");
        for p in caps["permissions"].as_array().unwrap() {
            let p = p.as_str().unwrap();
            let ok = p == "core:default"
                || p == "dialog:allow-open"
                || matches!(
                    p,
                    "autostart:allow-enable"
                        | "autostart:allow-disable"
                        | "autostart:allow-is-enabled"
                )
                || p.starts_with("allow-");
            assert!(ok, "unexpected permission {p}");
        }
    }
}

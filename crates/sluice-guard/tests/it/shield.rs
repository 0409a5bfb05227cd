//! The sensitive-file shield: defaults, any-depth matching, ancestors, case folding.

use sluice_core::{Coded, ErrorCode};
use sluice_guard::{RelPath, Shield};

fn shielded(shield: &Shield, path: &str) -> bool {
    shield.is_shielded(&RelPath::parse(path).unwrap())
}

#[test]
fn defaults_hide_secrets_at_any_depth() {
    let shield = Shield::default();
    for path in [
        ".env",
        "sub/.env.local",
        ".env.example",
        ".envrc",
        ".git",
        ".git/config",
        ".git/hooks/pre-commit",
        "vendor/lib/.git/config",
        "id_rsa",
        "deploy/id_ed25519.pub",
        ".ssh",
        ".ssh/x",
        "home/.ssh/known_hosts",
        ".aws/credentials",
        ".kube/config",
        ".gnupg/pubring.kbx",
        ".docker/config.json",
        "certs/server.pem",
        "tls/server.KEY",
        "a/b/store.p12",
        "x.pfx",
        "app.jks",
        ".npmrc",
        ".pypirc",
        ".netrc",
        ".git-credentials",
        "credentials.json",
        "gcp-credentials-prod.json",
        "service-account-ci.json",
        "infra/terraform.tfstate",
        "infra/terraform.tfstate.backup",
        "config/secrets.yaml",
        ".ENV",
        ".GIT/config",
        "ID_RSA",
        "Secrets.JSON",
    ] {
        assert!(shielded(&shield, path), "{path} should be shielded");
    }
    for path in [
        "README.md",
        ".gitignore",
        ".github/workflows/ci.yml",
        "src/env.rs",
        "environment.md",
        "keys.rs",
        "src/key.rs",
        "credentials.md",
        "docs/ssh.md",
        "git/config",
        "docker/config.json",
        ".",
    ] {
        assert!(!shielded(&shield, path), "{path} should not be shielded");
    }
}

#[test]
fn anchored_and_custom_patterns() {
    let shield = Shield::new(&["/private/**".into(), "*.sqlite".into(), "".into()]).unwrap();
    assert!(shielded(&shield, "private"));
    assert!(shielded(&shield, "private/a/b.txt"));
    assert!(!shielded(&shield, "docs/private/a.txt"));
    assert!(shielded(&shield, "data/app.SQLITE"));
    assert!(!shielded(&shield, ".env"), "custom list replaces the defaults");
    let inner = Shield::new(&["vault".into()]).unwrap();
    let below = RelPath::parse("vault/a.txt").unwrap();
    assert!(!inner.matches_entry(&below), "matches_entry ignores ancestors");
    assert!(inner.is_shielded(&below), "is_shielded checks ancestors");
    let entry = RelPath::parse("private/a").unwrap();
    let err = shield.check(&entry).unwrap_err();
    assert_eq!(err.code(), ErrorCode::PathShielded);
}

#[test]
fn bad_glob_names_the_pattern() {
    let err = Shield::new(&["ok".into(), "a[".into()]).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    assert!(err.to_string().contains("\"a[\""), "{err}");
}

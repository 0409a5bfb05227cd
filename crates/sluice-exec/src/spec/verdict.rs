//! The verdict: a command resolved to what will run ([`ResolvedCommand`]), its fingerprint, the
//! allow rules that match it exactly ([`AllowRule`]), and [`decide`], which puts the analysis and
//! the project's execution mode together.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sluice_core::ExecMode;

use super::{CommandSpec, Form, ProjectFacts, Risk, TrustedPath, assess, program_name, validate};
use crate::error::ExecError;

/// A command ready to spawn: the absolute program, argv, the normalized working directory and
/// the environment additions (sorted by name). This, and nothing else, is what approvals and
/// allow rules bind to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Normalized project-relative folder; `""` is the root.
    pub cwd: String,
    pub env: Vec<(String, String)>,
    pub timeout: Option<Duration>,
}

/// The BLAKE3 hash of a command's canonical encoding, hex.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Fingerprint(pub String);

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl ResolvedCommand {
    /// An unambiguous byte encoding: a version tag, then each field length-prefixed, so no two
    /// different commands encode alike (`["a b"]` ≠ `["a","b"]`, a newline is just a byte).
    pub fn canonical(&self) -> Vec<u8> {
        fn field(out: &mut Vec<u8>, bytes: &[u8]) {
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            out.extend_from_slice(bytes);
        }
        let mut out = b"sluice-exec/command/v1".to_vec();
        field(&mut out, self.program.as_os_str().as_encoded_bytes());
        out.extend_from_slice(&(self.args.len() as u64).to_le_bytes());
        for arg in &self.args {
            field(&mut out, arg.as_bytes());
        }
        field(&mut out, self.cwd.as_bytes());
        let mut env: Vec<&(String, String)> = self.env.iter().collect();
        env.sort();
        out.extend_from_slice(&(env.len() as u64).to_le_bytes());
        for (k, v) in env {
            field(&mut out, k.as_bytes());
            field(&mut out, v.as_bytes());
        }
        out
    }

    pub fn fingerprint(&self) -> Fingerprint {
        Fingerprint(blake3::hash(&self.canonical()).to_hex().to_string())
    }

    /// The program and its arguments on one line: each quoted when it needs it, every control
    /// or deceptive character shown as its code point ([`sluice_core::text::visible`]), so a
    /// newline or a terminal escape cannot draw a second line.
    pub fn display(&self) -> String {
        let mut out = quote(&self.program.to_string_lossy());
        for arg in &self.args {
            out.push(' ');
            out.push_str(&quote(arg));
        }
        out
    }

    /// [`Self::display`] with the folder and each environment variable, rendered the same way:
    /// the line an approval, an allow rule and the audit log show for the command.
    pub fn describe(&self) -> String {
        let mut out = self.display();
        if !self.cwd.is_empty() {
            out.push_str(" in ");
            out.push_str(&quote(&self.cwd));
        }
        for (k, v) in &self.env {
            out.push_str(" with ");
            out.push_str(&quote(k));
            out.push('=');
            out.push_str(&quote(v));
        }
        out
    }
}

fn quote(s: &str) -> String {
    let plain =
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._/:=@,+-%".contains(&b));
    if plain {
        return s.to_owned();
    }
    // Every hidden character is shown as its code point first; that never makes a quote.
    format!("'{}'", sluice_core::text::visible(s).replace('\'', "'\\''"))
}

/// "Always allow this exact command in this project": matches only a command whose canonical
/// encoding is identical — never a prefix, never a shell string (AP-03) — and, for a command
/// that runs project-defined text (`npm run`, `make`, `just`), only while that text is what the
/// user approved: any change to it asks again (AP-05).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowRule {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: String,
    pub env: Vec<(String, String)>,
    /// [`ProjectFacts::content_for`] when the user approved the command.
    #[serde(default)]
    pub content: Option<String>,
}

impl AllowRule {
    /// The rule "always allow" turns an approved verdict into.
    pub fn from_verdict(verdict: &Verdict) -> AllowRule {
        let cmd = &verdict.resolved;
        AllowRule {
            program: cmd.program.clone(),
            args: cmd.args.clone(),
            cwd: cmd.cwd.clone(),
            env: cmd.env.clone(),
            content: verdict.content.clone(),
        }
    }

    fn as_command(&self) -> ResolvedCommand {
        ResolvedCommand {
            program: self.program.clone(),
            args: self.args.clone(),
            cwd: self.cwd.clone(),
            env: self.env.clone(),
            timeout: None,
        }
    }

    /// Whether the rule allows `cmd`, which runs project-defined text hashing to `content`.
    pub fn matches(&self, cmd: &ResolvedCommand, content: Option<&str>) -> bool {
        self.as_command().canonical() == cmd.canonical() && self.content.as_deref() == content
    }

    pub fn fingerprint(&self) -> Fingerprint {
        self.as_command().fingerprint()
    }
}

/// The project's execution settings that the verdict depends on.
#[derive(Debug, Clone, Copy)]
pub struct Policy<'a> {
    pub mode: ExecMode,
    /// `project` mode asks by default; the user may turn that off.
    pub ask_in_project: bool,
    pub rules: &'a [AllowRule],
}

/// What the engine does next: run the resolved command, after asking the human if `ask`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub resolved: ResolvedCommand,
    pub fingerprint: Fingerprint,
    pub risk: Risk,
    /// What kind of command it is (inspection, toolchain form, anything else).
    pub form: Form,
    /// Shown in the approval prompt: what the command does and why it is risky.
    pub reason: String,
    pub ask: bool,
    /// The hash of the project-defined text the command runs ([`ProjectFacts::content_for`]),
    /// which an "always allow" rule made from this verdict is bound to.
    pub content: Option<String>,
}

/// Validates, analyses and resolves `spec` under `policy`. A refusal is an error with a reason
/// the assistant can act on; otherwise the verdict says whether to ask first.
pub fn decide(
    spec: &CommandSpec,
    facts: &ProjectFacts,
    trusted: &TrustedPath,
    policy: &Policy<'_>,
) -> Result<Verdict, ExecError> {
    if policy.mode == ExecMode::Off {
        return Err(ExecError::Refused("execution is off for this project".into()));
    }
    let cwd = validate(spec)?;
    let assessment = assess(spec, facts);
    let allowed = match (policy.mode, assessment.form) {
        (ExecMode::Off, _) => false,
        (_, Form::Inspection) => true,
        (ExecMode::Safe, _) => false,
        (ExecMode::Project, Form::Toolchain) => assessment.risk < Risk::Dangerous,
        (ExecMode::Project, Form::Arbitrary) => false,
        (ExecMode::Any, _) => true,
    };
    if !allowed {
        let why = match policy.mode {
            ExecMode::Safe => {
                "safe mode runs only version checks and read-only inspections".to_owned()
            }
            _ if assessment.risk == Risk::Dangerous => {
                format!("refused in project mode: {}", assessment.reason)
            }
            _ => format!(
                "project mode runs only the project's toolchain entry points: {}",
                assessment.not_toolchain.as_deref().unwrap_or("not a toolchain form")
            ),
        };
        return Err(ExecError::Refused(why));
    }
    let program = trusted.resolve(&spec.program)?;
    let mut env = spec.env.clone();
    for (k, v) in &assessment.forced_env {
        env.retain(|(n, _)| n != k);
        env.push((k.clone(), v.clone()));
    }
    env.sort();
    let resolved = ResolvedCommand {
        program,
        args: spec.args.clone(),
        cwd: cwd.as_str().to_owned(),
        env,
        timeout: spec.timeout,
    };
    let content = facts.content_for(&program_name(&spec.program));
    let ruled = policy.rules.iter().any(|r| r.matches(&resolved, content.as_deref()));
    // An inspection runs unasked only when it runs what the user's PATH runs outside the project.
    let chosen = match assessment.form {
        Form::Inspection => crate::pins::chosen_by_project(&resolved.program, &facts.pins),
        _ => None,
    };
    let ask = match (policy.mode, assessment.form) {
        (_, Form::Inspection) => chosen.is_some(),
        _ if ruled => false,
        (ExecMode::Project, _) => policy.ask_in_project,
        _ => true,
    };
    // An approval binds the project-defined text too: a script edited while the prompt is open
    // changes the fingerprint, and the approved call is refused as changed (AP-01, AP-05).
    let fingerprint = match &content {
        None => resolved.fingerprint(),
        Some(c) => Fingerprint(
            blake3::hash(format!("{}\0{c}", resolved.fingerprint()).as_bytes())
                .to_hex()
                .to_string(),
        ),
    };
    Ok(Verdict {
        fingerprint,
        resolved,
        risk: assessment.risk,
        form: assessment.form,
        reason: match chosen {
            Some(why) => format!("{}; {why}", assessment.reason),
            None => assessment.reason,
        },
        ask,
        content,
    })
}

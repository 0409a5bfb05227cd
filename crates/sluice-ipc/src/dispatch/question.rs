//! The native questions before the commands that widen what assistants may do: each says, in
//! the user's words, exactly what would widen, or is `None` when nothing does (then nothing is
//! asked). The analysis itself is the crate's `widens_*`, `unshielded`, `relaxed_autorun`,
//! `sandbox_widening` and `added_registries`; this module only words it.

use sluice_core::{GitEmails, GitHooks, NetworkMode};
use sluice_engine::Engine;

use super::{AUTHORIZE_TITLE, Question, RESTORE_TITLE, SANDBOX_TITLE, WIDEN_TITLE};
use crate::*;

/// Before a folder is authorized: always asked.
pub(super) fn authorize(args: &AddProject) -> Res<Question> {
    let text = authorize_question(args)?;
    Ok(Question { title: AUTHORIZE_TITLE, text, yes: "Authorize", no: "Cancel" })
}

pub(super) fn modes(e: &Engine, args: &SetModes) -> Res<Option<Question>> {
    Ok(widens_modes(e, args)?.map(|text| Question {
        title: WIDEN_TITLE,
        text,
        yes: "Allow",
        no: "Keep as is",
    }))
}

pub(super) fn shield(e: &Engine, id: &str, patterns: Option<&[String]>) -> Res<Option<Question>> {
    let exposed = unshielded(e, id, patterns)?;
    if exposed.is_empty() {
        return Ok(None);
    }
    let project = e.find_project(id)?;
    let text = format!(
        "Let assistants see files matching {} in {}?\n\nThese can hold secrets: \
         keys, tokens, credentials.",
        visible(&exposed.join(", ")),
        visible(&project.name)
    );
    Ok(Some(Question { title: WIDEN_TITLE, text, yes: "Show them", no: "Keep hidden" }))
}

pub(super) fn autorun(
    e: &Engine,
    id: &str,
    rules: Option<&[AutoRunRuleDto]>,
) -> Res<Option<Question>> {
    let relaxed = relaxed_autorun(e, id, rules)?;
    if relaxed.is_empty() {
        return Ok(None);
    }
    let project = e.find_project(id)?;
    let text = format!(
        "Guard {} less in {}?\n\nOther programs run these files on their own \
         (editors, assistants, git hooks, CI). Changes to them would no longer be \
         refused, or would no longer ask you first.",
        visible(&relaxed.join(", ")),
        visible(&project.name)
    );
    Ok(Some(Question { title: WIDEN_TITLE, text, yes: "Guard less", no: "Keep guarding" }))
}

pub(super) fn sandbox(
    e: &Engine,
    id: &str,
    settings: &SandboxSettingsDto,
) -> Res<Option<Question>> {
    let exposed = sandbox_widening(e, id, settings)?;
    if exposed.is_empty() {
        return Ok(None);
    }
    let text = exposed.iter().map(|l| visible(l)).collect::<Vec<_>>().join("\n\n");
    Ok(Some(Question { title: SANDBOX_TITLE, text, yes: "Allow", no: "Keep as is" }))
}

/// Before lifting the limit an assistant put on its own token: always asked.
pub(super) fn restore_token(e: &Engine, id: &str) -> Res<Question> {
    let text = restore_token_question(e, id)?;
    Ok(Question { title: WIDEN_TITLE, text, yes: "Restore", no: "Keep limited" })
}

/// Before widening a token's profile (narrowing is not asked).
pub(super) fn token_profile(
    e: &Engine,
    id: &str,
    profile: sluice_core::Profile,
) -> Res<Option<Question>> {
    let t =
        e.tokens()?.into_iter().find(|t| t.id.as_str() == id).ok_or_else(|| {
            Failure::new(ErrorCode::NotFound, format!("no token {:?}", visible(id)))
        })?;
    if profile <= t.profile {
        return Ok(None);
    }
    let text = format!(
        "Let the assistant with token {} {}?\n\nIt now may {}. The projects' own modes \
         still decide what is allowed in each.",
        visible(&t.label),
        profile.describe(),
        t.profile.describe()
    );
    Ok(Some(Question { title: WIDEN_TITLE, text, yes: "Allow", no: "Keep it as it is" }))
}

pub(super) fn policy(e: &Engine, args: &SetPolicy) -> Res<Option<Question>> {
    if !widens_policy(e, args)? {
        return Ok(None);
    }
    let what = match (args.ask_deletes, args.ask_writes) {
        (Some(false), Some(false)) => "delete, move, create and change files",
        (Some(false), _) => "delete and move files",
        _ => "create and change files",
    };
    let project = e.find_project(&args.id)?;
    let text = format!(
        "Let assistants {what} in {} without asking you first?\n\nEvery change is \
         still backed up and recorded in the activity log.",
        visible(&project.name)
    );
    let title = "Sluice — stop asking?";
    Ok(Some(Question { title, text, yes: "Stop asking", no: "Keep asking" }))
}

pub(super) fn network(e: &Engine, args: &SetNetwork) -> Res<Option<Question>> {
    let Some(next) = widens_network(e, args)? else { return Ok(None) };
    let project = e.find_project(&args.id)?;
    let later = "Commands that run later get the new setting; running ones keep theirs.";
    let question = if next == NetworkMode::Registries {
        let text = format!(
            "Let commands in {} reach the package registries?\n\nOnly HTTPS to the \
             {} hosts listed in Settings (crates.io, npm, PyPI and others): a \
             command could download packages, or publish the project's files to a \
             registry with an account of its own. Nothing else is reachable. {later}",
            visible(&project.name),
            e.registries()?.hosts().len()
        );
        let title = "Sluice — allow the package registries?";
        Question { title, text, yes: "Allow registries", no: "Keep off" }
    } else {
        let text = format!(
            "Let commands in {} open network connections to anywhere?\n\nA command \
             could then download code or send the project's files elsewhere. {later}",
            visible(&project.name)
        );
        Question { title: "Sluice — allow network?", text, yes: "Allow network", no: "Keep off" }
    };
    Ok(Some(question))
}

/// Before letting assistants see the e-mail addresses of a project's history (hiding them is
/// not asked).
pub(super) fn git_emails(e: &Engine, id: &str, show: bool) -> Res<Option<Question>> {
    let project = e.find_project(id)?;
    if !show || project.git_emails == GitEmails::Show {
        return Ok(None);
    }
    let text = format!(
        "Let assistants see the e-mail addresses in the git history of {}?\n\ngit_log and \
         git_show would give each commit's author address, not only the name. The addresses \
         belong to the people who made the commits.",
        visible(&project.name)
    );
    Ok(Some(Question { title: WIDEN_TITLE, text, yes: "Show addresses", no: "Keep hidden" }))
}

/// Before letting a project's commits run its git hooks (turning them off is not asked).
pub(super) fn git_hooks(e: &Engine, id: &str, run: bool) -> Res<Option<Question>> {
    let project = e.find_project(id)?;
    if !run || project.git_hooks == GitHooks::Sandbox {
        return Ok(None);
    }
    let text = format!(
        "Run the git hooks of {} when an assistant commits or switches branches?\n\nEach \
         hook (pre-commit, commit-msg, post-checkout, …) would run as a job in the project's \
         sandbox, like a command, and a failing pre-commit or commit-msg would stop the \
         commit. Hooks are programs in the repository: run them only if you trust what is \
         there.",
        visible(&project.name)
    );
    Ok(Some(Question { title: WIDEN_TITLE, text, yes: "Run hooks", no: "Keep off" }))
}

/// Before putting a project's files back as a checkpoint holds them: it overwrites and deletes
/// what changed since (undoable, but the user should know what they are choosing).
pub(super) fn restore_checkpoint(e: &Engine, project: &str, id: &str) -> Res<Question> {
    let p = e.find_project(project)?;
    let list = e.checkpoints(project)?;
    let Some(c) = list.checkpoints.iter().find(|c| c.checkpoint_id == id) else {
        return Err(Failure::new(
            ErrorCode::NotFound,
            format!("no checkpoint {id:?} in this project"),
        )
        .into());
    };
    let what = match (&c.name, &c.before_command) {
        (Some(name), _) => format!("\"{}\"", visible(name)),
        (None, Some(cmd)) => format!("the one taken before `{}`", visible(cmd)),
        (None, None) => "this checkpoint".to_owned(),
    };
    let text = format!(
        "Put the files of {} back as they were at {} ({what})?\n\nFiles changed since are \
         overwritten and files created since are deleted; ignored files, .git and protected \
         files are left alone. You can undo the restore afterwards.",
        visible(&p.name),
        c.created
    );
    Ok(Question { title: RESTORE_TITLE, text, yes: "Restore", no: "Keep the files" })
}

pub(super) fn registries(e: &Engine, hosts: Option<&[String]>) -> Res<Option<Question>> {
    let added = added_registries(e, hosts)?;
    if added.is_empty() {
        return Ok(None);
    }
    let shown: Vec<String> = added.iter().map(|h| visible(h)).collect();
    let text = format!(
        "Let commands of every project on the \"registries\" network reach {}?\n\n\
         They could download from these hosts and send data to them.",
        shown.join(", ")
    );
    let title = "Sluice — add registries?";
    Ok(Some(Question { title, text, yes: "Add", no: "Keep the list" }))
}

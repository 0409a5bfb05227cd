//! Who made a commit, as far as assistants see it: names always, e-mail addresses only when the
//! user allowed them for the project ([`GitEmails::Show`], a per-project setting that is off by
//! default and that no tool can change).
//!
//! What is decided here, and why:
//! - Hidden means git is never asked for an address: the commit format then has an empty field
//!   where `%ae` would be (the record keeps its shape), and the parser drops that field too, so
//!   neither half alone can leak one. Committer and tagger identities are never asked for at
//!   all, shown or not: no output has a field for them, and the only header text a tool
//!   returns is the format below (`git_show` peels tags to their commit, and its patches start
//!   at `diff --git`, with no `From:` or `Author:` header).
//! - No request value reaches git as a format or an option (see `validate`), so no `--format`
//!   or `--pretty` from a request can ask for `%ae`, `%ce` or a raw commit.
//! - An author *name* that holds an address (some people set `user.name` to one, or to
//!   `Ada <ada@example.com>`) is a side door: while hidden, anything address-shaped in it
//!   becomes [`HIDDEN`].
//! - Commit messages keep their addresses, trailers such as `Signed-off-by:` and
//!   `Co-authored-by:` included: a message is the commit's content, written to be read with the
//!   code, like an `AUTHORS` file or a `.mailmap` in a patch. Secret formats in messages are
//!   still redacted, as everywhere.
//! - The setting governs Sluice's git tools. A job's sandbox keeps `.git` readable (builds read
//!   the commit id), so where the project's execution mode lets an assistant run programs, a
//!   `git log` it runs reads the history, addresses included, as any program there could.

use std::sync::LazyLock;

use regex::Regex;
use sluice_core::GitEmails;

/// What an address in an author name becomes while addresses are hidden.
pub const HIDDEN: &str = "[email hidden]";

/// The `--format` for one commit: id, short id, parents, author name, author e-mail (an empty
/// field when hidden), author date (strict ISO 8601, an RFC 3339 timestamp), raw message,
/// separated by NULs.
pub(crate) fn commit_format(emails: GitEmails) -> &'static str {
    match emails {
        GitEmails::Show => "--format=%H%x00%h%x00%P%x00%an%x00%ae%x00%aI%x00%B",
        GitEmails::Hide => "--format=%H%x00%h%x00%P%x00%an%x00%x00%aI%x00%B",
    }
}

/// The author's address as the output carries it: `None` unless shown (and not empty).
pub(crate) fn author_email(raw: String, emails: GitEmails) -> Option<String> {
    (emails == GitEmails::Show && !raw.is_empty()).then_some(raw)
}

/// An address-shaped word, with the angle brackets or parentheses around it.
static ADDRESS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[<(]?[^\s<>()@]+@[^\s<>()@]+[>)]?").expect("address pattern"));

/// The author's name as the output carries it: while addresses are hidden, none inside it.
pub(crate) fn author_name(raw: String, emails: GitEmails) -> String {
    match emails {
        GitEmails::Show => raw,
        GitEmails::Hide => ADDRESS.replace_all(&raw, HIDDEN).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use sluice_core::GitEmails::{Hide, Show};

    use super::{author_email, author_name, commit_format};

    #[test]
    fn hidden_formats_never_ask_git_for_an_identity_address() {
        let hidden = commit_format(Hide);
        for placeholder in ["%ae", "%aE", "%ce", "%cE", "%al", "%cl", "%(trailers"] {
            assert!(!hidden.contains(placeholder), "{placeholder}");
        }
        assert!(commit_format(Show).contains("%ae"));
        // Both have the same seven fields.
        assert_eq!(hidden.matches("%x00").count(), commit_format(Show).matches("%x00").count());
    }

    #[test]
    fn addresses_are_dropped_and_scrubbed_from_names_while_hidden() {
        assert_eq!(author_email("ada@example.com".into(), Hide), None);
        assert_eq!(
            author_email("ada@example.com".into(), Show).as_deref(),
            Some("ada@example.com")
        );
        assert_eq!(author_email(String::new(), Show), None);
        for (name, want) in [
            ("Ada Lovelace", "Ada Lovelace"),
            ("ada@example.com", "[email hidden]"),
            ("Ada <ada@example.com>", "Ada [email hidden]"),
            ("Ada (ada.l+git@mail.example.org) L.", "Ada [email hidden] L."),
            ("@ada on the forum", "@ada on the forum"),
        ] {
            assert_eq!(author_name(name.into(), Hide), want, "{name}");
        }
        assert_eq!(author_name("ada@example.com".into(), Show), "ada@example.com");
    }
}

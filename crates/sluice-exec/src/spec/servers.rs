//! Language servers as a toolchain form: each known server with the one argument list it
//! speaks LSP on stdin and stdout with. A language server reads the whole project and runs its
//! code (build scripts, proc macros, compiler plugins, the interpreter it is configured with),
//! so it is exactly as risky as a build: `project` mode runs it, after asking like a build.
//! Anything else given to these programs is no toolchain form.

/// A language server Sluice can run for code intelligence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LanguageServer {
    pub program: &'static str,
    pub args: &'static [&'static str],
    /// The languages it answers for (`sluice_code::Language` names).
    pub languages: &'static [&'static str],
    /// How a user gets it, for the message when none is found.
    pub install: &'static str,
}

/// The servers, in the order they are looked for on the trusted PATH.
pub const LANGUAGE_SERVERS: &[LanguageServer] = &[
    LanguageServer {
        program: "rust-analyzer",
        args: &[],
        languages: &["rust"],
        install: "`rustup component add rust-analyzer`",
    },
    LanguageServer {
        program: "basedpyright-langserver",
        args: &["--stdio"],
        languages: &["python"],
        install: "`npm install -g basedpyright` or `pip install basedpyright`",
    },
    LanguageServer {
        program: "pyright-langserver",
        args: &["--stdio"],
        languages: &["python"],
        install: "`npm install -g pyright`",
    },
    LanguageServer {
        program: "typescript-language-server",
        args: &["--stdio"],
        languages: &["javascript", "typescript", "tsx"],
        install: "`npm install -g typescript-language-server typescript`",
    },
    LanguageServer {
        program: "gopls",
        args: &[],
        languages: &["go"],
        install: "`go install golang.org/x/tools/gopls@latest` (Debian: `apt install gopls`)",
    },
    LanguageServer {
        program: "clangd",
        args: &[],
        languages: &["c", "cpp"],
        install: "clangd from LLVM (Debian: `apt install clangd`)",
    },
    LanguageServer {
        program: "jdtls",
        args: &[],
        languages: &["java"],
        install: "Eclipse JDT Language Server (`jdtls`)",
    },
];

/// The servers that answer for `language`, in the order they are looked for.
pub fn servers_for(language: &str) -> impl Iterator<Item = &'static LanguageServer> + '_ {
    LANGUAGE_SERVERS.iter().filter(move |s| s.languages.contains(&language))
}

/// `Ok` (the reason shown in the approval) when `name args` is a known language server started
/// the one way Sluice starts it.
pub(super) fn form(name: &str, args: &[&str]) -> Option<Result<String, String>> {
    let server = LANGUAGE_SERVERS.iter().find(|s| s.program == name)?;
    Some(match server.args == args {
        true => Ok(format!(
            "starts the language server `{name}`, which reads the project and runs its code \
             (build scripts, plugins, the configured interpreter) as a build does"
        )),
        false => Err(format!(
            "`{name}` runs as a language server only as `{}`",
            std::iter::once(name).chain(server.args.iter().copied()).collect::<Vec<_>>().join(" ")
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_a_form_only_with_its_own_arguments() {
        assert!(form("pyright-langserver", &["--stdio"]).is_some_and(|r| r.is_ok()));
        assert!(form("pyright-langserver", &["--stdio", "--x"]).is_some_and(|r| r.is_err()));
        assert!(form("gopls", &[]).is_some_and(|r| r.is_ok()));
        assert!(form("gopls", &["run", "x"]).is_some_and(|r| r.is_err()));
        assert!(form("python3", &[]).is_none());
        let python: Vec<&str> = servers_for("python").map(|s| s.program).collect();
        assert_eq!(python, ["basedpyright-langserver", "pyright-langserver"]);
    }
}

//! What `CreateProcessWithLogonW` takes in place of an argv and an environment, built as data:
//! one command line that the program's C runtime (`CommandLineToArgvW`'s rules) splits back
//! into exactly the arguments given, and an environment block. Starting a process as another
//! account cannot go through `std::process::Command`, which does this for its own calls.
//!
//! Batch files are refused: `cmd.exe` reads their command line by other rules (the
//! "BatBadBut" class of injection), and a job never needs Sluice to start one directly.

use super::WinSandboxError;

/// The command line for `program` (absolute) with `args`.
pub fn command_line(program: &str, args: &[String]) -> Result<String, WinSandboxError> {
    let refuse = |why: &str| Err(WinSandboxError::Refused(why.to_owned()));
    let lower = program.to_ascii_lowercase();
    if lower.ends_with(".bat") || lower.ends_with(".cmd") {
        return refuse(
            "a batch file cannot be started as the sandbox account (cmd.exe reads its \
             arguments by other rules); run it through cmd.exe /c as a command of its own",
        );
    }
    // The program name is split by simpler rules: quotes delimit it and nothing escapes.
    if program.is_empty() || program.contains(['"', '\0']) {
        return refuse("the program's path cannot be given on a Windows command line");
    }
    let mut out = format!("\"{program}\"");
    for arg in args {
        if arg.contains('\0') {
            return refuse("an argument holds a NUL character");
        }
        out.push(' ');
        push_quoted(&mut out, arg);
    }
    Ok(out)
}

/// Appends `arg` so that `CommandLineToArgvW` reads it back as it is: unquoted when it has no
/// space, tab, newline or quote; otherwise quoted, each quote escaped, and the backslashes
/// before a quote (or before the closing one) doubled.
fn push_quoted(out: &mut String, arg: &str) {
    if !arg.is_empty() && !arg.contains([' ', '\t', '\n', '\u{b}', '"']) {
        out.push_str(arg);
        return;
    }
    out.push('"');
    let mut backslashes = 0usize;
    for c in arg.chars() {
        match c {
            '\\' => backslashes += 1,
            '"' => {
                out.extend(std::iter::repeat_n('\\', backslashes * 2 + 1));
                out.push('"');
                backslashes = 0;
            }
            _ => {
                out.extend(std::iter::repeat_n('\\', backslashes));
                out.push(c);
                backslashes = 0;
            }
        }
    }
    out.extend(std::iter::repeat_n('\\', backslashes * 2));
    out.push('"');
}

/// The environment block (`CREATE_UNICODE_ENVIRONMENT`): `NAME=value` entries sorted by name
/// ignoring case, each ended by a NUL, the block by another. A name that is empty, holds `=` or
/// a NUL, a value with a NUL, and a name given twice (ignoring case, as Windows reads them) are
/// refused: each would make the process see something other than what was built.
pub fn env_block(env: &[(String, String)]) -> Result<Vec<u16>, WinSandboxError> {
    let mut sorted: Vec<&(String, String)> = env.iter().collect();
    sorted.sort_by_key(|(k, _)| k.to_uppercase());
    let mut out = Vec::new();
    let mut previous: Option<String> = None;
    for (name, value) in sorted {
        if name.is_empty() || name.contains(['=', '\0']) || value.contains('\0') {
            return Err(WinSandboxError::Refused(
                "an environment variable cannot be passed to a Windows process as it is".into(),
            ));
        }
        let folded = name.to_uppercase();
        if previous.as_deref() == Some(folded.as_str()) {
            return Err(WinSandboxError::Refused(
                "an environment variable is given twice (Windows ignores case in names)".into(),
            ));
        }
        previous = Some(folded);
        out.extend(format!("{name}={value}").encode_utf16());
        out.push(0);
    }
    if out.is_empty() {
        out.push(0);
    }
    out.push(0);
    Ok(out)
}

/// `CommandLineToArgvW`'s reading of the arguments after the program (for the tests: the
/// command line must split back into what was given).
#[cfg(test)]
pub(crate) fn split_args(line: &str) -> Vec<String> {
    // Skip the program: quoted, no escapes.
    let rest = line.strip_prefix('"').and_then(|r| r.split_once('"')).map_or("", |(_, r)| r);
    let chars: Vec<char> = rest.chars().collect();
    let mut args = Vec::new();
    let mut i = 0;
    loop {
        while i < chars.len() && matches!(chars[i], ' ' | '\t') {
            i += 1;
        }
        if i >= chars.len() {
            return args;
        }
        let (mut arg, mut quoted) = (String::new(), false);
        while i < chars.len() && (quoted || !matches!(chars[i], ' ' | '\t')) {
            let mut backslashes = 0;
            while i < chars.len() && chars[i] == '\\' {
                backslashes += 1;
                i += 1;
            }
            if i < chars.len() && chars[i] == '"' {
                arg.extend(std::iter::repeat_n('\\', backslashes / 2));
                if backslashes % 2 == 1 {
                    arg.push('"');
                } else if quoted && chars.get(i + 1) == Some(&'"') {
                    arg.push('"');
                    i += 1;
                } else {
                    quoted = !quoted;
                }
                i += 1;
            } else {
                arg.extend(std::iter::repeat_n('\\', backslashes));
                if i < chars.len() && (quoted || !matches!(chars[i], ' ' | '\t')) {
                    arg.push(chars[i]);
                    i += 1;
                }
            }
        }
        args.push(arg);
    }
}

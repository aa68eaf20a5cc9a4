//! `sed` is read-only only without `-i` and with scripts whose every command only prints:
//! no `w`/`W` (write a file), no `e` (run a command), no `s///w` or `s///e`.

use super::CommandKind;
use super::options::{Opt, scan};

pub(super) fn check(args: &[&str]) -> Result<CommandKind, String> {
    let mut scripts = Vec::new();
    let mut first_positional = None;
    for opt in scan(args, "efl", &["expression", "file", "line-length"]) {
        match opt {
            Opt::Short('i', _) | Opt::Long("in-place", _) => {
                return Err("`sed -i` edits files in place".into());
            }
            Opt::Short('f', _) | Opt::Long("file", _) => {
                return Err("`sed -f` runs a script from a file, which is not checked".into());
            }
            Opt::Short('e', Some(script)) | Opt::Long("expression", Some(script)) => {
                scripts.push(script);
            }
            Opt::Short('e', None) | Opt::Long("expression", None) => {
                return Err("`sed -e` without a script".into());
            }
            Opt::Positional(p) => {
                first_positional.get_or_insert(p);
            }
            Opt::Short(_, _) | Opt::Long(_, _) => {}
        }
    }
    if scripts.is_empty() {
        match first_positional {
            Some(script) => scripts.push(script),
            None => return Err("sed without a script".into()),
        }
    }
    for script in scripts {
        script_is_safe(script)?;
    }
    Ok(CommandKind::Read)
}

/// Walk a sed script command by command; anything not understood is refused.
fn script_is_safe(script: &str) -> Result<(), String> {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let refuse = |what: &str| Err(format!("the sed script `{script}` {what}"));
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() || c == ';' || c == '}' {
            i += 1;
            continue;
        }
        // Addresses: line numbers, `$`, `/re/`, `\cREc`, ranges, steps, negation.
        i = skip_address(&chars, i);
        if i < chars.len() && chars[i] == ',' {
            i = skip_address(&chars, i + 1);
        }
        while i < chars.len() && (chars[i] == '!' || chars[i] == ' ') {
            i += 1;
        }
        let Some(&command) = chars.get(i) else {
            return refuse("ends with an address and no command");
        };
        i += 1;
        match command {
            '{' | 'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | '=' | 'z'
            | 'F' | 'l' | 'q' | 'Q' => {
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            '#' | ':' | 'b' | 't' | 'T' | 'a' | 'i' | 'c' | 'r' | 'R' => {
                // Labels, comments, appended text, files to read: to the end of the line
                // (labels end at `;` too).
                let stop_at_semicolon = matches!(command, ':' | 'b' | 't' | 'T');
                while i < chars.len() && chars[i] != '\n' && !(stop_at_semicolon && chars[i] == ';')
                {
                    i += 1;
                }
            }
            's' | 'y' => {
                let Some(&delim) = chars.get(i) else {
                    return refuse("has an unterminated `s` command");
                };
                if delim == '\\' || delim == '\n' {
                    return refuse("uses an unusual delimiter");
                }
                i += 1;
                for _ in 0..2 {
                    i = skip_delimited(&chars, i, delim).ok_or_else(|| {
                        format!("the sed script `{script}` has an unterminated `{command}` command")
                    })?;
                }
                if command == 's' {
                    while i < chars.len() && !matches!(chars[i], ';' | '\n' | '}') {
                        match chars[i] {
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' | ' ' => {}
                            d if d.is_ascii_digit() => {}
                            'w' | 'W' => return refuse("writes a file (`s///w`)"),
                            'e' => return refuse("runs a command (`s///e`)"),
                            _ => return refuse("has an unknown `s` flag"),
                        }
                        i += 1;
                    }
                }
            }
            'w' | 'W' => return refuse("writes a file (`w`)"),
            'e' => return refuse("runs a command (`e`)"),
            _ => return refuse("uses a command that is not known to be safe"),
        }
    }
    Ok(())
}

fn skip_address(chars: &[char], mut i: usize) -> usize {
    match chars.get(i) {
        Some('$') => i + 1,
        Some('+' | '~') => {
            i += 1;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            i
        }
        Some(d) if d.is_ascii_digit() => {
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '~') {
                i += 1;
            }
            i
        }
        Some('/') => skip_delimited(chars, i + 1, '/').map_or(chars.len(), skip_regex_flags(chars)),
        Some('\\') => match chars.get(i + 1) {
            Some(&delim) => {
                skip_delimited(chars, i + 2, delim).map_or(chars.len(), skip_regex_flags(chars))
            }
            None => chars.len(),
        },
        _ => i,
    }
}

fn skip_regex_flags(chars: &[char]) -> impl Fn(usize) -> usize + '_ {
    move |mut i| {
        while i < chars.len() && matches!(chars[i], 'I' | 'M') {
            i += 1;
        }
        i
    }
}

/// Index just after the next unescaped `delim` from `i`, or `None` when there is none.
fn skip_delimited(chars: &[char], mut i: usize, delim: char) -> Option<usize> {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            c if c == delim => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

//! `${VAR}` and `${VAR:-default}` in server configurations, as Claude Code expands them in
//! `command`, `args`, `env`, `url` and `headers`. A bare `$VAR` is left alone.

/// Expands `text`; `lookup` answers a variable's value. The names of variables that were
/// needed, unset and without a default, come back as the error.
pub(crate) fn expand_vars(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, Vec<String>> {
    let mut out = String::with_capacity(text.len());
    let mut missing = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            // An unclosed `${` is literal text.
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        let valid =
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !valid {
            out.push_str(&rest[start..start + 2 + end + 1]);
        } else {
            match (lookup(name), default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => missing.push(name.to_owned()),
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

/// The process environment as a lookup (empty values count as set, as in a shell).
pub(crate) fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/me".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expands_like_claude_code() {
        assert_eq!(expand_vars("${HOME}/x", &env), Ok("/home/me/x".to_owned()));
        assert_eq!(expand_vars("${NOPE:-dflt}", &env), Ok("dflt".to_owned()));
        assert_eq!(
            expand_vars("${HOME:-dflt}", &env),
            Ok("/home/me".to_owned())
        );
        assert_eq!(expand_vars("${EMPTY:-d}", &env), Ok(String::new()));
        assert_eq!(expand_vars("$HOME ${", &env), Ok("$HOME ${".to_owned()));
        assert_eq!(expand_vars("${a b}", &env), Ok("${a b}".to_owned()));
        assert_eq!(
            expand_vars("${A}-${HOME}-${B}", &env),
            Err(vec!["A".to_owned(), "B".to_owned()])
        );
    }
}

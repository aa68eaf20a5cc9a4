//! GNU-style option scanning shared by the program checks (`programs`, `sed`).

/// A parsed command-line option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Opt<'a> {
    Short(char, Option<&'a str>),
    Long(&'a str, Option<&'a str>),
    Positional(&'a str),
}

/// Split arguments into options and positionals, GNU style: short clusters (`-abc`), short
/// options with values (`-ofile`, `-o file`), long options (`--x=v`, `--x v`), `--` ends options.
pub(super) fn scan<'a>(args: &[&'a str], short_values: &str, long_values: &[&str]) -> Vec<Opt<'a>> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut options_done = false;
    while i < args.len() {
        let arg = args[i];
        i += 1;
        if options_done || arg == "-" || !arg.starts_with('-') {
            out.push(Opt::Positional(arg));
            continue;
        }
        if arg == "--" {
            options_done = true;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            match long.split_once('=') {
                Some((name, value)) => out.push(Opt::Long(name, Some(value))),
                None if long_values.contains(&long) => {
                    out.push(Opt::Long(long, args.get(i).copied()));
                    i += 1;
                }
                None => out.push(Opt::Long(long, None)),
            }
            continue;
        }
        let cluster = &arg[1..];
        for (at, c) in cluster.char_indices() {
            if short_values.contains(c) {
                let rest = &cluster[at + c.len_utf8()..];
                if rest.is_empty() {
                    out.push(Opt::Short(c, args.get(i).copied()));
                    i += 1;
                } else {
                    out.push(Opt::Short(c, Some(rest)));
                }
                break;
            }
            out.push(Opt::Short(c, None));
        }
    }
    out
}

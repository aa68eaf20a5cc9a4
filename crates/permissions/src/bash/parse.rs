//! The tree-sitter walk: from a command line to simple commands, redirections and concerns.

use std::cell::RefCell;

use tree_sitter::{Node, Parser};

use super::{CommandAnalysis, CommandKind, Redirection, SimpleCommand, Word, programs};

thread_local! {
    // A parser is cheap to keep and costly enough to build that the Bash tool's hot path reuses it.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn unparseable(command: &str, why: &str) -> CommandAnalysis {
    CommandAnalysis {
        command: command.to_string(),
        commands: Vec::new(),
        concerns: vec![why.to_string()],
        parse_error: true,
        splittable: false,
    }
}

pub(super) fn analyze(command: &str) -> CommandAnalysis {
    let tree = PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            if let Err(err) = parser.set_language(&tree_sitter_bash::LANGUAGE.into()) {
                tracing::error!(%err, "tree-sitter-bash grammar does not load");
                return None;
            }
            *slot = Some(parser);
        }
        // tree-sitter-bash's scanner crashes (SIGSEGV) on some non-ASCII characters (`{` then
        // U+E0000, found by fuzz_bash): it sees ASCII only, each other byte a word character, as
        // bash does; offsets are unchanged, so the walk reads the real text.
        let shadow: Vec<u8> = command
            .bytes()
            .map(|b| if b < 0x80 { b } else { b'x' })
            .collect();
        slot.as_mut().and_then(|parser| parser.parse(&shadow, None))
    });
    let Some(tree) = tree else {
        return unparseable(command, "the command could not be parsed");
    };
    let mut walker = Walker {
        src: command.as_bytes(),
        commands: Vec::new(),
        concerns: Vec::new(),
        parse_error: false,
        function_definition: false,
        arithmetic: false,
    };
    let root = tree.root_node();
    if root.has_error() {
        walker.parse_error = true;
        walker.concern("the command has a syntax error");
    }
    walker.visit(root, false);
    for command in &mut walker.commands {
        judge(command);
    }
    CommandAnalysis {
        command: command.to_string(),
        splittable: !walker.parse_error && !walker.function_definition && !walker.arithmetic,
        commands: walker.commands,
        concerns: walker.concerns,
        parse_error: walker.parse_error,
    }
}

/// Decide a command's kind and whether it is read-only on its own.
fn judge(command: &mut SimpleCommand) {
    if command.not_read_only.is_some() {
        return;
    }
    let verdict = if let Some(redirect) = command.redirections.iter().find(|r| r.writes_file) {
        Err(format!("redirects output to `{}`", redirect.target))
    } else if let Some((name, _)) = command
        .assignments
        .iter()
        .find(|(name, value)| !safe_assignment(name, value))
    {
        Err(format!(
            "sets `{name}` for the command, which can change what runs"
        ))
    } else {
        match &command.program {
            None => Err("the program name is only known at run time".to_string()),
            Some(program) => programs::check(program, &command.args),
        }
    };
    match verdict {
        Ok(kind) => command.kind = kind,
        Err(why) => {
            command.kind = match &command.program {
                Some(program) => programs::kind_of(program),
                None => CommandKind::Other,
            };
            command.not_read_only = Some(why);
        }
    }
}

/// Prefix assignments that only change formatting, never what runs.
fn safe_assignment(name: &str, value: &str) -> bool {
    let literal = !value.contains(['$', '`', '(', '<', '>']);
    let harmless = matches!(
        name,
        "LANG" | "LANGUAGE" | "TZ" | "NO_COLOR" | "CLICOLOR" | "COLUMNS" | "LINES" | "TERM"
    ) || name.starts_with("LC_");
    literal && harmless
}

struct Walker<'a> {
    src: &'a [u8],
    commands: Vec<SimpleCommand>,
    concerns: Vec<String>,
    parse_error: bool,
    function_definition: bool,
    arithmetic: bool,
}

impl Walker<'_> {
    fn text(&self, node: Node<'_>) -> String {
        node.utf8_text(self.src).unwrap_or_default().to_string()
    }

    fn concern(&mut self, why: &str) {
        if !self.concerns.iter().any(|c| c == why) {
            self.concerns.push(why.to_string());
        }
    }

    fn visit_children(&mut self, node: Node<'_>, nested: bool) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            self.visit(child, nested);
        }
    }

    fn visit(&mut self, node: Node<'_>, nested: bool) {
        if node.is_error() || node.is_missing() {
            self.parse_error = true;
            self.concern("the command has a syntax error");
        }
        match node.kind() {
            "command" => self.command(node, nested),
            "redirected_statement" => self.redirected_statement(node, nested),
            "variable_assignment" | "variable_assignments" => {
                self.pseudo(node, nested, None, "assigns a shell variable");
                self.visit_children(node, nested);
            }
            "declaration_command" | "unset_command" => {
                let keyword = node
                    .child(0)
                    .map(|k| self.text(k))
                    .unwrap_or_else(|| "declare".to_string());
                self.pseudo(node, nested, Some(keyword), "changes shell variables");
                self.visit_children(node, nested);
            }
            "test_command" => {
                let why = test_command_concern(node, self.src);
                self.pseudo(
                    node,
                    nested,
                    Some("[[".to_string()),
                    why.unwrap_or_default(),
                );
                if why.is_none() {
                    // Judged like any allowlisted program (`[[` is neutral there).
                    if let Some(last) = self.commands.last_mut() {
                        last.not_read_only = None;
                    }
                }
                self.visit_children(node, nested);
            }
            "function_definition" => {
                self.function_definition = true;
                self.concern("defines a shell function");
                self.visit_children(node, nested);
            }
            "command_substitution" => {
                self.concern("uses command substitution");
                self.visit_children(node, true);
            }
            "process_substitution" => {
                self.concern("uses process substitution");
                self.visit_children(node, true);
            }
            "arithmetic_expansion" | "c_style_for_statement" => {
                self.arithmetic = true;
                self.concern("evaluates arithmetic, which can run code through array subscripts");
                self.visit_children(node, nested);
            }
            "compound_statement" => {
                if node.child(0).is_some_and(|c| c.kind() == "((") {
                    self.arithmetic = true;
                    self.concern(
                        "evaluates arithmetic, which can run code through array subscripts",
                    );
                }
                self.visit_children(node, nested);
            }
            _ => self.visit_children(node, nested),
        }
    }

    /// A statement that is not a plain command but still a part (assignments, `export`, `[[`).
    fn pseudo(&mut self, node: Node<'_>, nested: bool, program: Option<String>, why: &str) {
        let text = self.text(node);
        self.commands.push(SimpleCommand {
            program,
            args: Vec::new(),
            assignments: Vec::new(),
            redirections: Vec::new(),
            text: normalize_space(&text),
            source: text,
            nested,
            kind: CommandKind::Other,
            not_read_only: Some(why.to_string()),
        });
    }

    fn command(&mut self, node: Node<'_>, nested: bool) {
        let mut program = None;
        let mut program_raw = None;
        let mut args = Vec::new();
        let mut assignments = Vec::new();
        let mut redirections = Vec::new();
        let mut own_problem = None;
        let mut cursor = node.walk();
        let mut children = Vec::new();
        if cursor.goto_first_child() {
            loop {
                children.push((cursor.field_name(), cursor.node()));
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        // tree-sitter-bash 0.25 can read a pipeline's last command on into the next line
        // (`a | b | c\nrm x` as `c rm x`, found by fuzz_bash), with no error node: a newline
        // between two words of one command is a parse bash does not make.
        if children.windows(2).any(|pair| {
            let gap = self
                .src
                .get(pair[0].1.end_byte()..pair[1].1.start_byte())
                .unwrap_or_default();
            gap.iter()
                .enumerate()
                .any(|(i, b)| *b == b'\n' && (i == 0 || gap[i - 1] != b'\\'))
        }) {
            self.parse_error = true;
            self.concern("the command has a syntax error");
        }
        for (field, child) in &children {
            let child = *child;
            match (*field, child.kind()) {
                (Some("name"), _) => {
                    let word = child.named_child(0).unwrap_or(child);
                    program_raw = Some(self.text(child));
                    program = word_literal(word, self.src);
                    if has_substitution(child) {
                        own_problem = Some("the program name is computed by a substitution");
                    }
                }
                (Some("argument"), _) => {
                    if has_substitution(child) {
                        own_problem = Some("an argument is computed by a substitution");
                    }
                    args.push(Word {
                        raw: self.text(child),
                        literal: word_literal(child, self.src),
                    });
                }
                (Some("redirect"), _) | (_, "file_redirect" | "herestring_redirect") => {
                    self.redirections_of(child, &mut redirections);
                }
                (_, "variable_assignment") => {
                    let name = child
                        .child_by_field_name("name")
                        .map(|n| self.text(n))
                        .unwrap_or_default();
                    let value = child
                        .child_by_field_name("value")
                        .map(|v| self.text(v))
                        .unwrap_or_default();
                    assignments.push((name, value));
                }
                _ => {}
            }
        }
        let mut words: Vec<String> = assignments
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        words.extend(program_raw.clone());
        words.extend(args.iter().map(|a| a.raw.clone()));
        let source = self.text(node);
        let program = match (program, program_raw) {
            (Some(p), _) => Some(p),
            (None, Some(_)) => {
                own_problem.get_or_insert("the program name is only known at run time");
                None
            }
            (None, None) => None,
        };
        self.commands.push(SimpleCommand {
            program,
            args,
            assignments,
            redirections,
            text: words.join(" "),
            source,
            nested,
            kind: CommandKind::Other,
            not_read_only: own_problem.map(str::to_string),
        });
        // Substitutions inside the words are parts of their own.
        for (_, child) in children {
            if child.kind() == "variable_assignment" {
                self.visit_children(child, nested);
            } else if child.is_named() {
                self.visit(child, nested);
            }
        }
    }

    fn redirected_statement(&mut self, node: Node<'_>, nested: bool) {
        let start = self.commands.len();
        let body = node.child_by_field_name("body");
        if let Some(body) = body {
            self.visit(body, nested);
        }
        let end = self.commands.len();
        let mut redirections = Vec::new();
        let mut later = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            if Some(child) == body {
                continue;
            }
            match child.kind() {
                "file_redirect" | "herestring_redirect" => {
                    self.redirections_of(child, &mut redirections);
                    later.push(child);
                }
                "heredoc_redirect" => {
                    self.redirections_of(child, &mut redirections);
                    // `cat <<EOF && rm x` and `cat <<EOF | sh` hang the rest of the line here.
                    let mut inner = child.walk();
                    let statements: Vec<Node<'_>> = child.named_children(&mut inner).collect();
                    for statement in statements {
                        match statement.kind() {
                            "heredoc_start"
                            | "heredoc_end"
                            | "file_descriptor"
                            | "file_redirect"
                            | "herestring_redirect" => {}
                            _ => later.push(statement),
                        }
                    }
                }
                _ => later.push(child),
            }
        }
        if start == end {
            // A redirection with no command (`> f`, `{ ; } > f`) still truncates a file.
            self.pseudo(node, nested, None, "redirection without a command");
            if let Some(last) = self.commands.last_mut() {
                last.redirections.clone_from(&redirections);
            }
        } else {
            let whole = self.text(node);
            for command in &mut self.commands[start..end] {
                command.redirections.extend(redirections.iter().cloned());
            }
            if end - start == 1 && body.is_some_and(|b| b.kind() == "command") {
                self.commands[start].source = whole;
            }
        }
        for child in later {
            self.visit(child, nested);
        }
    }

    fn redirections_of(&self, node: Node<'_>, out: &mut Vec<Redirection>) {
        match node.kind() {
            "file_redirect" => {
                let mut operator = String::new();
                let mut fd = None;
                let mut target = None;
                let mut cursor = node.walk();
                if cursor.goto_first_child() {
                    loop {
                        let child = cursor.node();
                        match cursor.field_name() {
                            Some("descriptor") => fd = Some(self.text(child)),
                            Some("destination") => {
                                target.get_or_insert((
                                    self.text(child),
                                    word_literal(child, self.src),
                                ));
                            }
                            _ if !child.is_named() => operator = child.kind().to_string(),
                            _ => {}
                        }
                        if !cursor.goto_next_sibling() {
                            break;
                        }
                    }
                }
                let (raw, literal) = target.unwrap_or_default();
                let writes_file = redirect_writes(&operator, literal.as_deref());
                out.push(Redirection {
                    operator,
                    fd,
                    target: raw,
                    literal,
                    writes_file,
                });
            }
            "herestring_redirect" => out.push(Redirection {
                operator: "<<<".to_string(),
                fd: None,
                target: node
                    .named_child(node.named_child_count().saturating_sub(1))
                    .map(|n| self.text(n))
                    .unwrap_or_default(),
                literal: None,
                writes_file: false,
            }),
            "heredoc_redirect" => {
                let delimiter = node
                    .named_child(0)
                    .filter(|n| n.kind() == "heredoc_start")
                    .map(|n| self.text(n))
                    .unwrap_or_default();
                out.push(Redirection {
                    operator: "<<".to_string(),
                    fd: None,
                    target: delimiter,
                    literal: None,
                    writes_file: false,
                });
                let mut cursor = node.walk();
                let nested: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for child in nested {
                    if matches!(child.kind(), "file_redirect" | "herestring_redirect") {
                        self.redirections_of(child, out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Whether a file redirection writes: output operators to anything but the null device, and
/// `>&word` when the word is not a descriptor.
fn redirect_writes(operator: &str, target: Option<&str>) -> bool {
    let harmless_sink = matches!(target, Some("/dev/null" | "/dev/stdout" | "/dev/stderr"));
    let descriptor = target
        .is_some_and(|t| t == "-" || (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())));
    match operator {
        "<" => false,
        "<&" | ">&" | "<&-" | ">&-" => !(descriptor || harmless_sink || target.is_none()),
        // `>`, `>>`, `>|`, `&>`, `&>>`, `<>` and anything new: a write unless to a sink.
        _ => !harmless_sink,
    }
}

/// Why a `[[ ]]` test is not read-only: arithmetic comparisons evaluate variables' contents as
/// arithmetic (which can run `a[$(cmd)]`), and expansions make the outcome unknowable.
fn test_command_concern(node: Node<'_>, src: &[u8]) -> Option<&'static str> {
    let text = node.utf8_text(src).unwrap_or_default();
    let arithmetic = ["-eq", "-ne", "-lt", "-le", "-gt", "-ge"]
        .iter()
        .any(|op| text.split_whitespace().any(|w| w == *op));
    if arithmetic {
        return Some("`[[ ]]` with an arithmetic comparison evaluates variables as code");
    }
    if has_expansion(node) {
        return Some("`[[ ]]` expands variables");
    }
    None
}

fn any_descendant(node: Node<'_>, pred: &dyn Fn(&str) -> bool) -> bool {
    if pred(node.kind()) {
        return true;
    }
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
    children.into_iter().any(|c| any_descendant(c, pred))
}

fn has_substitution(node: Node<'_>) -> bool {
    any_descendant(node, &|k| {
        matches!(
            k,
            "command_substitution" | "process_substitution" | "arithmetic_expansion"
        )
    })
}

fn has_expansion(node: Node<'_>) -> bool {
    any_descendant(node, &|k| {
        matches!(
            k,
            "simple_expansion"
                | "expansion"
                | "command_substitution"
                | "process_substitution"
                | "arithmetic_expansion"
        )
    })
}

fn normalize_space(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The value of a word when it is fixed before running: quotes removed, no expansion, no glob,
/// no brace expansion.
pub(super) fn word_literal(node: Node<'_>, src: &[u8]) -> Option<String> {
    let text = node.utf8_text(src).ok()?;
    let value = match node.kind() {
        "word" | "number" => unescape_word(text)?,
        "raw_string" => text.strip_prefix('\'')?.strip_suffix('\'')?.to_string(),
        "string" => {
            let mut value = String::new();
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                if child.kind() != "string_content" {
                    return None;
                }
                value.push_str(&unescape_double_quoted(child.utf8_text(src).ok()?));
            }
            value
        }
        "ansi_c_string" => {
            let inner = text.strip_prefix("$'")?.strip_suffix('\'')?;
            if inner.contains('\\') {
                return None;
            }
            inner.to_string()
        }
        "concatenation" => {
            let mut value = String::new();
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                value.push_str(&word_literal(child, src)?);
            }
            if value.contains('{')
                && (value.contains(',') || value.contains(".."))
                && !text.starts_with(['"', '\''])
            {
                return None;
            }
            value
        }
        _ => return None,
    };
    Some(value)
}

/// Remove backslashes from an unquoted word; `None` if it holds an unescaped glob character.
fn unescape_word(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            '*' | '?' | '[' => return None,
            '{' if text.contains(',') || text.contains("..") => return None,
            _ => out.push(c),
        }
    }
    Some(out)
}

fn unescape_double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
            && matches!(next, '"' | '\\' | '$' | '`')
        {
            out.push(next);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

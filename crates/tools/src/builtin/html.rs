//! A small, careful HTML-to-text converter for WebFetch: drops scripts, styles and markup,
//! keeps the structure a reader needs (headings, paragraphs, list items, links as
//! `[text](href)`, preformatted blocks) and decodes entities. Malformed HTML degrades to
//! text; it never fails.

/// Elements whose content is never text for a reader.
const SKIPPED: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "head",
];

/// Elements that start and end on their own line.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "header",
    "footer",
    "main",
    "nav",
    "aside",
    "ul",
    "ol",
    "table",
    "tr",
    "pre",
    "blockquote",
    "form",
    "dl",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "details",
    "summary",
    "address",
    "fieldset",
    "body",
    "html",
];

struct Tag<'a> {
    name: String,
    closing: bool,
    attributes: &'a str,
}

/// `html` as readable text.
pub(crate) fn html_to_text(html: &str) -> String {
    let mut out = Converter::default();
    let mut rest = html;
    let mut title = None;
    while let Some(start) = rest.find('<') {
        out.text(&rest[..start]);
        rest = &rest[start..];
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |end| &after[end + 3..]);
            continue;
        }
        if rest.starts_with("<!") || rest.starts_with("<?") {
            rest = rest.find('>').map_or("", |end| &rest[end + 1..]);
            continue;
        }
        let Some((tag, after)) = parse_tag(rest) else {
            // A lone `<` is text.
            out.text("<");
            rest = &rest[1..];
            continue;
        };
        rest = after;
        if tag.name == "title" && !tag.closing {
            let (inner, after) = until_closing(rest, "title");
            title = Some(decode_entities(inner.trim()));
            rest = after;
            continue;
        }
        if SKIPPED.contains(&tag.name.as_str()) && !tag.closing {
            let (inner, after) = until_closing(rest, &tag.name);
            if tag.name == "head" {
                title = title.or_else(|| find_title(inner));
            }
            rest = after;
            continue;
        }
        out.tag(&tag);
    }
    out.text(rest);
    let body = out.finish();
    match title {
        Some(title) if !title.is_empty() && !body.starts_with(&format!("# {title}")) => {
            format!("# {title}\n\n{body}")
        }
        _ => body,
    }
}

/// The `<title>` inside a `<head>`.
fn find_title(head: &str) -> Option<String> {
    let start = head.to_ascii_lowercase().find("<title")?;
    let (_, after) = parse_tag(&head[start..])?;
    Some(decode_entities(until_closing(after, "title").0.trim()))
}

/// The text before `</name>` and what follows it (case-insensitive).
fn until_closing<'a>(rest: &'a str, name: &str) -> (&'a str, &'a str) {
    let lower = rest.to_ascii_lowercase();
    let needle = format!("</{name}");
    match lower.find(&needle) {
        Some(at) => {
            let after = &rest[at..];
            let end = after.find('>').map_or(after.len(), |end| end + 1);
            (&rest[..at], &after[end..])
        }
        None => (rest, ""),
    }
}

/// Parses `<name attr="...">` at the start of `text`; None when it is not a tag.
fn parse_tag(text: &str) -> Option<(Tag<'_>, &str)> {
    let inner = text.strip_prefix('<')?;
    let (closing, inner) = match inner.strip_prefix('/') {
        Some(inner) => (true, inner),
        None => (false, inner),
    };
    let name_len = inner
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(inner.len());
    if name_len == 0 || !inner.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    // Find the closing `>` outside quoted attribute values.
    let mut quote = None;
    let mut end = None;
    for (index, c) in inner.char_indices().skip(name_len) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => {
                end = Some(index);
                break;
            }
            (None, _) => {}
        }
    }
    let end = end?;
    Some((
        Tag {
            name: inner[..name_len].to_ascii_lowercase(),
            closing,
            attributes: &inner[name_len..end],
        },
        &inner[end + 1..],
    ))
}

/// The value of attribute `name` in a tag's attribute text.
fn attribute(attributes: &str, name: &str) -> Option<String> {
    let lower = attributes.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find(name) {
        let at = from + found;
        from = at + name.len();
        let before_ok = at == 0 || lower[..at].ends_with(|c: char| c.is_whitespace());
        let rest = attributes[from..].trim_start();
        if !before_ok || !rest.starts_with('=') {
            continue;
        }
        let value = rest[1..].trim_start();
        let value = match value.chars().next() {
            Some(q @ ('"' | '\'')) => value[1..].split(q).next().unwrap_or_default(),
            _ => value
                .split(|c: char| c.is_whitespace())
                .next()
                .unwrap_or_default(),
        };
        return Some(decode_entities(value));
    }
    None
}

#[derive(Default)]
struct Converter {
    out: String,
    pre_depth: usize,
    /// The href of each open `<a>` (None for anchors that are not links).
    links: Vec<Option<String>>,
    list_depth: usize,
    /// Whitespace seen and not yet written (collapsed to one space before the next word).
    pending_space: bool,
}

impl Converter {
    fn text(&mut self, raw: &str) {
        if raw.is_empty() {
            return;
        }
        let decoded = decode_entities(raw);
        if self.pre_depth > 0 {
            self.out.push_str(&decoded);
            return;
        }
        for c in decoded.chars() {
            if c.is_whitespace() {
                self.pending_space = true;
                continue;
            }
            if self.pending_space && !self.out.is_empty() && !self.out.ends_with([' ', '\n', '[']) {
                self.out.push(' ');
            }
            self.pending_space = false;
            self.out.push(c);
        }
    }

    fn newline(&mut self, count: usize) {
        self.pending_space = false;
        while self.out.ends_with(' ') {
            self.out.pop();
        }
        if self.out.is_empty() {
            return;
        }
        let present = self.out.len() - self.out.trim_end_matches('\n').len();
        for _ in present..count {
            self.out.push('\n');
        }
    }

    fn tag(&mut self, tag: &Tag<'_>) {
        let name = tag.name.as_str();
        match name {
            "br" => self.out.push('\n'),
            "hr" => {
                self.newline(2);
                self.out.push_str("---");
                self.newline(2);
            }
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                self.newline(2);
                if !tag.closing {
                    let level = name[1..].parse().unwrap_or(1);
                    self.out.push_str(&"#".repeat(level));
                    self.out.push(' ');
                }
            }
            "li" if !tag.closing => {
                self.newline(1);
                self.out
                    .push_str(&"  ".repeat(self.list_depth.saturating_sub(1)));
                self.out.push_str("- ");
            }
            "ul" | "ol" => {
                if tag.closing {
                    self.list_depth = self.list_depth.saturating_sub(1);
                } else {
                    self.list_depth += 1;
                }
                self.newline(if self.list_depth > 1 { 1 } else { 2 });
            }
            "td" | "th" if tag.closing && !self.out.ends_with(['\n', ' ']) => {
                self.out.push(' ');
            }
            "pre" => {
                self.newline(2);
                if tag.closing {
                    self.pre_depth = self.pre_depth.saturating_sub(1);
                } else {
                    self.pre_depth += 1;
                }
            }
            "a" => {
                if tag.closing {
                    if let Some(Some(href)) = self.links.pop() {
                        self.out.push_str(&format!("]({href})"));
                    }
                } else {
                    let href = attribute(tag.attributes, "href").filter(|href| {
                        !href.is_empty()
                            && !href.starts_with('#')
                            && !href.starts_with("javascript:")
                    });
                    if href.is_some() {
                        if self.pending_space
                            && !self.out.is_empty()
                            && !self.out.ends_with([' ', '\n'])
                        {
                            self.out.push(' ');
                        }
                        self.pending_space = false;
                        self.out.push('[');
                    }
                    self.links.push(href);
                }
            }
            _ if BLOCKS.contains(&name) => self.newline(2),
            _ => {}
        }
    }

    fn finish(self) -> String {
        let mut text = String::new();
        let mut blank_run = 0;
        for line in self.out.lines() {
            let line = line.trim_end();
            if line.is_empty() {
                blank_run += 1;
                if blank_run > 1 {
                    continue;
                }
            } else {
                blank_run = 0;
            }
            text.push_str(line);
            text.push('\n');
        }
        text.trim().to_owned()
    }
}

/// Decodes character references: the common named ones and all numeric ones. Unknown names are
/// left as written.
pub(crate) fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = rest[1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '#'))
            .map(|end| end + 1);
        let (name, consumed) = match end {
            Some(end) if rest[end..].starts_with(';') => (&rest[1..end], end + 1),
            Some(end) => (&rest[1..end], end),
            None => (&rest[1..], rest.len()),
        };
        match decode_one(name) {
            Some(decoded) => {
                out.push(decoded);
                rest = &rest[consumed..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn decode_one(name: &str) -> Option<char> {
    if let Some(number) = name.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        return char::from_u32(code).filter(|c| *c != '\0');
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "ndash" => '–',
        "mdash" => '—',
        "hellip" => '…',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "laquo" => '«',
        "raquo" => '»',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "middot" => '·',
        "bull" => '•',
        "times" => '×',
        "euro" => '€',
        "pound" => '£',
        "deg" => '°',
        _ => return None,
    })
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;

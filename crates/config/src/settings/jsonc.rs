//! Settings text to a tree that remembers where each value is. The grammar is JSON plus `//`
//! and `/* */` comments and trailing commas (JSONC, what editors write into `settings.json`
//! and what people add by hand); nothing looser, so a file tine accepts means the same to
//! every other reader. `jsonc-parser` does the scanning (we keep only its AST, not its types,
//! so swapping it is local to this file and to the writer, `edit`, which edits its concrete
//! syntax tree); positions are byte offsets, turned into a line and a
//! column only for messages.

use jsonc_parser::ast;
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, CommentCollectionStrategy, ParseOptions};
use serde_json::{Map, Number, Value};

/// A value and the byte offset where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spanned {
    pub offset: usize,
    pub node: Node,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Spanned>),
    /// Members in the order written, duplicates included.
    Object(Vec<Member>),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Member {
    pub key: String,
    pub key_offset: usize,
    pub value: Spanned,
}

/// A parsed file.
#[derive(Debug)]
pub(crate) struct Document {
    /// `None` for a file holding only whitespace and comments.
    pub root: Option<Spanned>,
    lines: LineIndex,
}

impl Document {
    /// 1-based line and column of a byte offset.
    pub fn position(&self, offset: usize) -> (usize, usize) {
        self.lines.position(offset)
    }
}

/// Why the text is not JSONC, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// The grammar: JSON plus comments and trailing commas, nothing looser (the writer's tree is
/// parsed with the same options).
pub(crate) fn parse_options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// Parse settings text. A leading byte-order mark is skipped.
pub(crate) fn parse(text: &str) -> Result<Document, SyntaxError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines = LineIndex::new(text);
    let options = parse_options();
    let collect = CollectOptions {
        comments: CommentCollectionStrategy::Off,
        tokens: false,
    };
    let parsed = jsonc_parser::parse_to_ast(text, &collect, &options).map_err(|err| {
        let (line, column) = lines.position(err.range().start);
        SyntaxError {
            line,
            column,
            message: err.kind().to_string(),
        }
    })?;
    let root = parsed
        .value
        .map(|value| convert(value, &lines))
        .transpose()?;
    Ok(Document { root, lines })
}

// Recursion is bounded: the parser refuses nesting deeper than 512.
fn convert(value: ast::Value<'_>, lines: &LineIndex) -> Result<Spanned, SyntaxError> {
    let offset = value.start();
    let node = match value {
        ast::Value::NullKeyword(_) => Node::Null,
        ast::Value::BooleanLit(b) => Node::Bool(b.value),
        ast::Value::StringLit(s) => Node::String(s.value.into_owned()),
        ast::Value::NumberLit(n) => match serde_json::from_str::<Number>(n.value) {
            Ok(number) => Node::Number(number),
            Err(err) => {
                let (line, column) = lines.position(offset);
                return Err(SyntaxError {
                    line,
                    column,
                    message: format!("invalid number `{}`: {err}", n.value),
                });
            }
        },
        ast::Value::Array(array) => Node::Array(
            array
                .elements
                .into_iter()
                .map(|v| convert(v, lines))
                .collect::<Result<_, _>>()?,
        ),
        ast::Value::Object(object) => Node::Object(
            object
                .properties
                .into_iter()
                .map(|prop| {
                    let key_offset = prop.name.start();
                    Ok(Member {
                        key: prop.name.into_string(),
                        key_offset,
                        value: convert(prop.value, lines)?,
                    })
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    Ok(Spanned { offset, node })
}

impl Spanned {
    /// The plain JSON value; of duplicate keys the last one wins, as in every JSON reader.
    pub fn to_value(&self) -> Value {
        match &self.node {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Number(n) => Value::Number(n.clone()),
            Node::String(s) => Value::String(s.clone()),
            Node::Array(items) => Value::Array(items.iter().map(Spanned::to_value).collect()),
            Node::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|m| (m.key.clone(), m.value.to_value()))
                    .collect::<Map<_, _>>(),
            ),
        }
    }

    /// "a string", "an array", ... for messages.
    pub fn type_name(&self) -> &'static str {
        match self.node {
            Node::Null => "null",
            Node::Bool(_) => "a boolean",
            Node::Number(_) => "a number",
            Node::String(_) => "a string",
            Node::Array(_) => "an array",
            Node::Object(_) => "an object",
        }
    }
}

/// Byte offsets of line starts (`\n` ends a line; a `\r` before it is part of the line).
#[derive(Debug)]
struct LineIndex {
    starts: Vec<usize>,
    text: String,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex {
            starts,
            text: text.to_owned(),
        }
    }

    fn position(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&start| start <= offset) - 1;
        let start = self.starts[line];
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (line + 1, column + 1)
    }
}

#[cfg(test)]
#[path = "jsonc_tests.rs"]
mod tests;

use super::*;

const DOC: &str = "# Plan\n\nFirst we **read** the `config`, then:\n\n1. parse it\n2. check it\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\n| k | v |\n|---|---|\n| a | 1 |\n\n> a quote\n> on two lines\n\nDone.";

fn plain(stream: &mut MarkdownStream) -> Vec<String> {
    stream
        .lines()
        .map(|l| {
            let mut s: String = l.first.iter().map(|s| s.content.as_ref()).collect();
            s.push_str(&l.body.to_string());
            s
        })
        .collect()
}

fn streamed(text: &str, piece: usize) -> MarkdownStream {
    let mut s = MarkdownStream::new();
    let chars: Vec<char> = text.chars().collect();
    for chunk in chars.chunks(piece) {
        s.push(&chunk.iter().collect::<String>());
    }
    s.finish();
    s
}

#[test]
fn streaming_in_any_pieces_ends_as_the_whole_text_renders() {
    let mut whole = MarkdownStream::complete(DOC);
    assert_eq!(
        whole.committed_renders(),
        6,
        "nothing is rendered before it is looked at... then all of it"
    );
    let expected: Vec<IndentedLine> = whole.lines().cloned().collect();
    for piece in [1, 2, 3, 7, 64] {
        let mut s = streamed(DOC, piece);
        let got: Vec<IndentedLine> = s.lines().cloned().collect();
        assert_eq!(got, expected, "pieces of {piece}");
    }
}

#[test]
fn chunked_rendering_looks_like_rendering_the_document_at_once() {
    let mut s = streamed(DOC, 5);
    let at_once: Vec<String> = crate::markdown::render(DOC)
        .iter()
        .map(|l| {
            let mut s: String = l.first.iter().map(|s| s.content.as_ref()).collect();
            s.push_str(&l.body.to_string());
            s
        })
        .collect();
    assert_eq!(plain(&mut s), at_once);
}

#[test]
fn committed_blocks_are_rendered_once_not_per_delta() {
    // A frame after every delta: the committed part must not be rendered again each time.
    let mut s = MarkdownStream::new();
    for c in DOC.chars() {
        s.push(&c.to_string());
        let _ = s.rows(60, &[], &[]);
    }
    s.finish();
    // Six markdown chunks around the code block; a delta-per-character stream of ~200
    // deltas must not have rendered them again and again.
    assert!(
        s.committed_renders() <= 6,
        "rendered {} chunks",
        s.committed_renders()
    );
}

#[test]
fn code_lines_commit_as_each_line_completes() {
    let mut s = MarkdownStream::new();
    s.push("intro\n\n```rust\nlet a = 1;\nlet b");
    assert_eq!(s.committed_len(), "intro\n\n```rust\nlet a = 1;\n".len());
    assert_eq!(plain(&mut s), ["intro", "", "let a = 1;", "let b"]);
    s.push(" = 2;\n```\nafter");
    assert_eq!(
        plain(&mut s),
        ["intro", "", "let a = 1;", "let b = 2;", "", "after"]
    );
}

#[test]
fn the_open_tail_shows_unfinished_text() {
    let mut s = MarkdownStream::new();
    s.push("Hello **wor");
    assert_eq!(plain(&mut s), ["Hello **wor"]);
    s.push("ld**");
    assert_eq!(plain(&mut s), ["Hello world"]);
    assert_eq!(s.committed_len(), 0, "one paragraph, still open");
}

#[test]
fn a_list_items_indented_continuation_stays_in_the_item() {
    let mut s = streamed("- item\n\n  more of it\n\nnext", 1);
    assert_eq!(plain(&mut s), ["• item", "", "  more of it", "", "next"]);
}

#[test]
fn nested_fences_are_never_cut_inside() {
    let text = "- step:\n  ```\n  a\n\nb\n  ```\n";
    let mut whole = MarkdownStream::complete(text);
    let mut s = streamed(text, 1);
    assert_eq!(plain(&mut s), plain(&mut whole));
}

#[test]
fn committed_rows_are_extended_not_redone() {
    let mut s = MarkdownStream::new();
    s.push("one\n\ntwo\n\nthree");
    let (committed, tail) = s.rows(20, &[], &[]);
    assert_eq!(committed.len(), 3, "one, blank, two");
    assert_eq!(tail.len(), 2, "blank, three");
    let first_row = committed[0].clone();
    s.push("\n\nfour");
    let (committed, _) = s.rows(20, &[], &[]);
    assert_eq!(committed.len(), 5);
    assert_eq!(committed[0], first_row);
}

#[test]
fn nothing_is_parsed_until_looked_at() {
    let mut s = MarkdownStream::new();
    s.push("# a\n\nb\n\nc");
    s.finish();
    assert_eq!(s.renders, 0);
    assert_eq!(s.pos, 0);
    assert_eq!(plain(&mut s), ["a", "", "b", "", "c"]);
}

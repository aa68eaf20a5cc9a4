//! Read of images, PDFs and notebooks, and NotebookEdit, through the real tools.

use serde_json::{Value, json};
use tine_tools::{MediaKind, NotebookEditTool, ReadTool};

use super::support::{context, run};

const PNG: &[u8] =
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";

#[tokio::test]
async fn an_image_becomes_an_image_attachment_told_by_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("shot.png"), PNG).unwrap();
    // A JPEG named .png is sent as what it is.
    std::fs::write(dir.path().join("photo.png"), [0xff, 0xd8, 0xff, 0xe0, 1, 2]).unwrap();
    std::fs::write(dir.path().join("fake.gif"), "not an image").unwrap();
    let ctx = context(dir.path());
    let out = run(&ReadTool, json!({"file_path": "shot.png"}), &ctx).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(out.media.len(), 1);
    assert_eq!(out.media[0].kind, MediaKind::Image);
    assert_eq!(out.media[0].media_type, "image/png");
    use base64::Engine;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(&out.media[0].data)
        .unwrap();
    assert_eq!(decoded, PNG);
    let out = run(&ReadTool, json!({"file_path": "photo.png"}), &ctx).await;
    assert_eq!(out.media[0].media_type, "image/jpeg");
    let out = run(&ReadTool, json!({"file_path": "fake.gif"}), &ctx).await;
    assert!(
        out.is_error && out.content.contains("not a PNG, JPEG, GIF or WebP"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn an_image_over_the_apis_limit_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let mut big = PNG.to_vec();
    big.resize(4 * 1024 * 1024, 0);
    std::fs::write(dir.path().join("big.png"), &big).unwrap();
    let out = run(
        &ReadTool,
        json!({"file_path": "big.png"}),
        &context(dir.path()),
    )
    .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("over the API's 5.0 MB limit"),
        "{}",
        out.content
    );
    assert!(out.content.contains("smaller"), "{}", out.content);
    assert!(out.media.is_empty());
}

#[tokio::test]
async fn a_pdf_becomes_a_document_and_pages_is_for_pdfs_only() {
    let dir = tempfile::tempdir().unwrap();
    let pdf = b"%PDF-1.4\n1 0 obj << /Type /Page >>\n%%EOF\n";
    std::fs::write(dir.path().join("doc.pdf"), pdf).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hi\n").unwrap();
    let ctx = context(dir.path());
    let out = run(&ReadTool, json!({"file_path": "doc.pdf"}), &ctx).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(out.media[0].kind, MediaKind::Document);
    assert_eq!(out.media[0].media_type, "application/pdf");
    assert!(out.content.contains("1 pages"), "{}", out.content);
    let out = run(
        &ReadTool,
        json!({"file_path": "notes.txt", "pages": "1-2"}),
        &ctx,
    )
    .await;
    assert!(
        out.is_error && out.content.contains("only applies to PDF"),
        "{}",
        out.content
    );
    let out = run(
        &ReadTool,
        json!({"file_path": "doc.pdf", "pages": "1-40"}),
        &ctx,
    )
    .await;
    assert!(
        out.is_error && out.content.contains("at most 20"),
        "{}",
        out.content
    );
}

fn notebook() -> Value {
    json!({
        "cells": [
            {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title\n", "text"]},
            {"cell_type": "code", "id": "calc", "metadata": {}, "execution_count": 1,
             "source": "1 + 1", "outputs": [
                {"output_type": "execute_result", "execution_count": 1, "metadata": {},
                 "data": {"text/plain": ["2"]}},
                {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBORw0KGgo=\n"}}
             ]}
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5
    })
}

#[tokio::test]
async fn read_shows_a_notebooks_cells_and_outputs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("nb.ipynb"), notebook().to_string()).unwrap();
    let out = run(
        &ReadTool,
        json!({"file_path": "nb.ipynb"}),
        &context(dir.path()),
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert!(
        out.content.contains(
            "<cell id=\"intro\"><cell_type>markdown</cell_type># Title\ntext</cell id=\"intro\">"
        ),
        "{}",
        out.content
    );
    assert!(
        out.content.contains("<output cell=\"calc\">2</output>"),
        "{}",
        out.content
    );
    assert_eq!(out.media.len(), 1);
    assert_eq!(out.media[0].data, "iVBORw0KGgo=");
}

#[tokio::test]
async fn notebook_edit_replaces_inserts_and_deletes_cells_after_a_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nb.ipynb");
    std::fs::write(&path, notebook().to_string()).unwrap();
    let ctx = context(dir.path());
    let edit = |input: Value| {
        let ctx = ctx.clone();
        async move { run(&NotebookEditTool, input, &ctx).await }
    };
    // Not read yet: refused, as Edit is.
    let out =
        edit(json!({"notebook_path": "nb.ipynb", "cell_id": "calc", "new_source": "2 + 2"})).await;
    assert!(out.is_error, "{}", out.content);
    run(&ReadTool, json!({"file_path": "nb.ipynb"}), &ctx).await;

    let out =
        edit(json!({"notebook_path": "nb.ipynb", "cell_id": "calc", "new_source": "2 + 2"})).await;
    assert!(!out.is_error, "{}", out.content);
    let nb: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(nb["cells"][1]["source"], "2 + 2");
    assert_eq!(nb["cells"][1]["outputs"], json!([]));
    assert_eq!(nb["cells"][1]["execution_count"], Value::Null);

    let out = edit(
        json!({"notebook_path": "nb.ipynb", "cell_id": "intro", "new_source": "x = 1",
                         "cell_type": "code", "edit_mode": "insert"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    let nb: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(nb["cells"].as_array().unwrap().len(), 3);
    assert_eq!(nb["cells"][1]["source"], "x = 1");
    assert!(nb["cells"][1]["id"].is_string());

    let out =
        edit(json!({"notebook_path": "nb.ipynb", "new_source": "", "edit_mode": "insert"})).await;
    assert!(
        out.is_error && out.content.contains("`cell_type`"),
        "{}",
        out.content
    );

    let out = edit(
        json!({"notebook_path": "nb.ipynb", "cell_id": "intro", "new_source": "",
                         "edit_mode": "delete"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    let nb: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(nb["cells"].as_array().unwrap().len(), 2);
    assert_eq!(nb["cells"][0]["source"], "x = 1");

    let out =
        edit(json!({"notebook_path": "nb.ipynb", "cell_id": "nope", "new_source": "y"})).await;
    assert!(
        out.is_error && out.content.contains("no cell with id `nope`"),
        "{}",
        out.content
    );
}

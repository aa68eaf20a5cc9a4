//! An editor's prompt (ACP content blocks) as the op the session runs: text alone is
//! [`Op::parse`]d (a `/command` is a command); with an image or a file it is
//! [`Op::PromptContent`]. An `@`-mentioned file arrives as an embedded resource and becomes
//! context the way a Read of it would: the Read call and its numbered lines, as Claude Code
//! attaches a mentioned file; a resource link stays a mention the model may Read.

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};
use tine_api_client::{ContentBlock as Block, ImageBlock, ImageSource};
use tine_session::Op;

/// The media types the Messages API takes as images.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Why a prompt cannot be sent.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct PromptError(pub String);

/// The op for `prompt`.
pub(crate) fn to_op(prompt: &[ContentBlock]) -> Result<Op, PromptError> {
    let mut blocks = Vec::with_capacity(prompt.len());
    for block in prompt {
        match block {
            ContentBlock::Text(text) => blocks.push(Block::text(text.text.clone())),
            ContentBlock::Image(image) => {
                if !IMAGE_TYPES.contains(&image.mime_type.as_str()) {
                    return Err(PromptError(format!(
                        "an image of type {} cannot be sent to the model: use PNG, JPEG, GIF or \
                         WebP",
                        image.mime_type
                    )));
                }
                blocks.push(Block::Image(ImageBlock {
                    source: ImageSource::Base64 {
                        media_type: image.mime_type.clone(),
                        data: image.data.clone(),
                    },
                    cache_control: None,
                }));
            }
            ContentBlock::ResourceLink(link) => {
                blocks.push(Block::text(mention(&link.uri, &link.name)));
            }
            ContentBlock::Resource(resource) => match &resource.resource {
                EmbeddedResourceResource::TextResourceContents(contents) => {
                    blocks.push(Block::text(as_read(&contents.uri, &contents.text)));
                }
                EmbeddedResourceResource::BlobResourceContents(contents) => {
                    let mime = contents.mime_type.as_deref().unwrap_or_default();
                    if IMAGE_TYPES.contains(&mime) {
                        blocks.push(Block::Image(ImageBlock {
                            source: ImageSource::Base64 {
                                media_type: mime.to_owned(),
                                data: contents.blob.clone(),
                            },
                            cache_control: None,
                        }));
                    } else {
                        blocks.push(Block::text(mention(&contents.uri, &contents.uri)));
                    }
                }
                _ => {}
            },
            ContentBlock::Audio(_) => {
                return Err(PromptError(
                    "audio cannot be sent to the model: send text or an image".to_owned(),
                ));
            }
            _ => {}
        }
    }
    if blocks.is_empty() {
        return Err(PromptError(
            "the prompt is empty: send at least one text block".to_owned(),
        ));
    }
    if blocks.iter().all(|block| matches!(block, Block::Text(_))) {
        let text: Vec<String> = blocks
            .into_iter()
            .filter_map(|block| match block {
                Block::Text(text) => Some(text.text),
                _ => None,
            })
            .collect();
        return Ok(Op::parse(&text.join("\n\n")));
    }
    Ok(Op::PromptContent(blocks))
}

/// A file path for a `file://` URI; any other URI as it is.
fn path_of(uri: &str) -> &str {
    uri.strip_prefix("file://").unwrap_or(uri)
}

/// A mention of a resource the model may open.
fn mention(uri: &str, name: &str) -> String {
    let path = path_of(uri);
    if path == name || name.is_empty() {
        format!("@{path}")
    } else {
        format!("@{path} ({name})")
    }
}

/// An embedded file as the model reads a Read of it: the call, then `N<tab>line` for each line.
fn as_read(uri: &str, text: &str) -> String {
    let input = serde_json::json!({ "file_path": path_of(uri) });
    let mut numbered = String::with_capacity(text.len() + text.len() / 8);
    for (index, line) in text.lines().enumerate() {
        numbered.push_str(&(index + 1).to_string());
        numbered.push('\t');
        numbered.push_str(line);
        numbered.push('\n');
    }
    format!(
        "<system-reminder>\nCalled the Read tool with the following input: {input}\n\
         </system-reminder>\n<system-reminder>\nResult of calling the Read tool:\n{numbered}\
         </system-reminder>"
    )
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::{
        EmbeddedResource, ImageContent, ResourceLink, TextContent, TextResourceContents,
    };

    use super::*;

    fn text(text: &str) -> ContentBlock {
        ContentBlock::Text(TextContent::new(text))
    }

    #[test]
    fn text_alone_is_a_prompt_or_a_command() {
        assert_eq!(
            to_op(&[text("hi"), text("there")]).unwrap(),
            Op::Prompt("hi\n\nthere".into())
        );
        assert_eq!(
            to_op(&[text("/compact keep the API")]).unwrap(),
            Op::Command {
                name: "compact".into(),
                args: "keep the API".into()
            }
        );
        assert!(to_op(&[]).is_err());
    }

    #[test]
    fn an_embedded_file_reads_as_a_read_and_a_link_stays_a_mention() {
        let file = ContentBlock::Resource(EmbeddedResource::new(
            EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                "fn main() {}\n// unsaved",
                "file:///p/src/main.rs",
            )),
        ));
        let link = ContentBlock::ResourceLink(ResourceLink::new("lib.rs", "file:///p/src/lib.rs"));
        let Op::Prompt(prompt) = to_op(&[text("look"), file, link]).unwrap() else {
            panic!("text alone")
        };
        assert!(prompt.starts_with("look\n\n<system-reminder>"), "{prompt}");
        assert!(
            prompt.contains(r#"{"file_path":"/p/src/main.rs"}"#),
            "{prompt}"
        );
        assert!(
            prompt.contains("1\tfn main() {}\n2\t// unsaved\n"),
            "{prompt}"
        );
        assert!(prompt.ends_with("@/p/src/lib.rs (lib.rs)"), "{prompt}");
    }

    #[test]
    fn an_image_goes_to_the_model_beside_the_text() {
        let image = ContentBlock::Image(ImageContent::new("iVBORw0KGgo=", "image/png"));
        let Op::PromptContent(blocks) = to_op(&[text("what is this?"), image]).unwrap() else {
            panic!("an image makes content")
        };
        assert!(matches!(&blocks[0], Block::Text(t) if t.text == "what is this?"));
        assert!(matches!(&blocks[1], Block::Image(_)));
        let tiff = ContentBlock::Image(ImageContent::new("AAAA", "image/tiff"));
        assert!(to_op(&[tiff]).unwrap_err().0.contains("PNG"));
    }
}

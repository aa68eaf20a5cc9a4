//! What an Edit or Write would change, for the permission dialog: the file before and after,
//! so a front end numbers the lines as the file does and shows their context.

use serde_json::Value;

use crate::protocol::EditPreview;

/// Files larger than this are previewed from the Edit's strings alone.
const EDIT_PREVIEW_MAX_BYTES: u64 = 1 << 20;

/// For Edit and Write (at `target`, the resolved path): the change the call would make; the
/// edit's strings alone when the file does not hold them.
pub(crate) fn of_call(tool: &str, input: &Value, target: &str) -> Option<EditPreview> {
    let field = |name: &str| input.get(name).and_then(Value::as_str);
    match tool {
        "Edit" => {
            let (old, new) = (field("old_string")?, field("new_string")?);
            let replace_all = input.get("replace_all").and_then(Value::as_bool) == Some(true);
            let file = std::fs::metadata(target)
                .ok()
                .filter(|meta| meta.len() <= EDIT_PREVIEW_MAX_BYTES)
                .and_then(|_| std::fs::read_to_string(target).ok())
                .filter(|text| !old.is_empty() && text.contains(old));
            Some(match file {
                Some(before) => {
                    let after = if replace_all {
                        before.replace(old, new)
                    } else {
                        before.replacen(old, new, 1)
                    };
                    EditPreview { before, after }
                }
                None => EditPreview {
                    before: old.to_owned(),
                    after: new.to_owned(),
                },
            })
        }
        "Write" => Some(EditPreview {
            before: std::fs::read_to_string(target).unwrap_or_default(),
            after: field("content")?.to_owned(),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_edit_is_previewed_on_the_whole_file_or_its_strings() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.txt");
        std::fs::write(&path, "one\ntwo\nthree\nfour\n").unwrap();
        let target = path.to_str().unwrap();
        let input = json!({"file_path": "x.txt", "old_string": "three", "new_string": "THREE"});
        let preview = of_call("Edit", &input, target).unwrap();
        assert_eq!(preview.before, "one\ntwo\nthree\nfour\n");
        assert_eq!(preview.after, "one\ntwo\nTHREE\nfour\n");
        let input = json!({"file_path": "x.txt", "old_string": "nine", "new_string": "NINE"});
        let preview = of_call("Edit", &input, target).unwrap();
        assert_eq!(
            (preview.before.as_str(), preview.after.as_str()),
            ("nine", "NINE")
        );
        assert!(of_call("Bash", &json!({"command": "ls"}), target).is_none());
    }
}

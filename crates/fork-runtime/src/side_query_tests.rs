use serde_json::json;

use super::*;

#[test]
fn extracts_a_bare_value() {
    assert_eq!(extract_json(" {\"a\": 1} \n"), Some(json!({"a": 1})));
    assert_eq!(
        extract_json("\"just a string\""),
        Some(json!("just a string"))
    );
}

#[test]
fn extracts_a_fenced_value() {
    let text = "Here you go:\n```json\n{\"files\": [\"a.md\"]}\n```\nAnything else?";
    assert_eq!(extract_json(text), Some(json!({"files": ["a.md"]})));
}

#[test]
fn extracts_the_first_value_after_prose() {
    let text = "I picked these [because] of {x}: {\"files\": [\"b.md\"]} and also {\"c\": 2}";
    assert_eq!(extract_json(text), Some(json!({"files": ["b.md"]})));
}

#[test]
fn no_value_is_none() {
    assert_eq!(extract_json("no json here { at all"), None);
    assert_eq!(extract_json(""), None);
}

#[test]
fn the_system_prompt_has_prefix_caller_part_and_schema() {
    let q = SideQuery::new("m", "s", vec![])
        .with_system("Pick memories.")
        .with_schema(json!({"type": "object"}));
    let Some(SystemPrompt::Blocks(blocks)) = q.system_prompt() else {
        panic!("blocks expected")
    };
    assert_eq!(blocks[0].text, CLI_SYSTEM_PREFIX);
    assert_eq!(blocks[1].text, "Pick memories.");
    assert!(
        blocks[2].text.ends_with(":\n{\"type\":\"object\"}"),
        "{}",
        blocks[2].text
    );
    assert!(blocks.iter().all(|b| b.cache_control.is_none()));
    let bare = SideQuery::new("m", "s", vec![]).skipping_system_prefix();
    assert_eq!(bare.system_prompt(), None);
}

#[test]
fn the_ledger_sums_per_source_and_in_total() {
    let ledger = UsageLedger::new();
    let u = Usage {
        input_tokens: 100,
        output_tokens: 10,
        ..Usage::default()
    };
    let shared = ledger.clone();
    let c1 = shared.record("memory_recall", "claude-sonnet-4-5", &u);
    ledger.record("memory_recall", "claude-sonnet-4-5", &u);
    ledger.record("permission_explainer", "claude-sonnet-4-5", &u);
    let recall = ledger.get("memory_recall").unwrap();
    assert_eq!(recall.requests, 2);
    assert_eq!(recall.usage.input_tokens, 200);
    assert!((recall.cost_usd - 2.0 * c1).abs() < 1e-12);
    assert_eq!(ledger.total().requests, 3);
    assert_eq!(ledger.snapshot().len(), 2);
    assert!(ledger.get("compact").is_none());
    // By model too: the sources' requests and the host's own.
    ledger.record_model("claude-haiku-4-5", &u);
    let models = ledger.by_model();
    assert_eq!(models["claude-sonnet-4-5"].requests, 3);
    assert_eq!(models["claude-haiku-4-5"].requests, 1);
    assert_eq!(
        ledger.total().requests,
        3,
        "by model only: no source gained"
    );
}

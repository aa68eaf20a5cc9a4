//! Questions about the requests the mock recorded.

use serde_json::Value;
use tine_api_client::Usage;
use tine_mock_api::RequestRecord;

/// Whether a request's last message carries `marker`.
pub fn last_user_has(record: &RequestRecord, marker: &str) -> bool {
    let body: Value = record.json().unwrap();
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m.to_string().contains(marker))
}

/// Whether any part of a request's body contains `text`.
pub fn body_has(record: &RequestRecord, text: &str) -> bool {
    String::from_utf8_lossy(&record.body).contains(text)
}

/// The usage the mock billed a request with (its cache accounting is the API's).
pub fn api_usage(record: &RequestRecord) -> Usage {
    let u = record.usage.unwrap();
    Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_creation_input_tokens: u.cache_creation_input_tokens,
        cache_read_input_tokens: u.cache_read_input_tokens,
        ..Usage::default()
    }
}

use super::*;

fn body(error_type: &str, message: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": "req_body"
    }))
    .unwrap()
}

#[test]
fn every_status_maps_to_its_kind() {
    let cases = [
        (400, "invalid_request_error", ApiErrorKind::InvalidRequest),
        (401, "authentication_error", ApiErrorKind::Authentication),
        (402, "billing_error", ApiErrorKind::Billing),
        (403, "permission_error", ApiErrorKind::Permission),
        (404, "not_found_error", ApiErrorKind::NotFound),
        (413, "request_too_large", ApiErrorKind::RequestTooLarge),
        (429, "rate_limit_error", ApiErrorKind::RateLimit),
        (500, "api_error", ApiErrorKind::Api),
        (504, "timeout_error", ApiErrorKind::Timeout),
        (529, "overloaded_error", ApiErrorKind::Overloaded),
    ];
    for (status, error_type, kind) in cases {
        let from_body = ApiError::from_response(status, &body(error_type, "m"), None, None, None);
        assert_eq!(from_body.kind(), Some(&kind), "{status} with body");
        assert_eq!(from_body.status(), Some(status));
        assert_eq!(from_body.request_id(), Some("req_body"));
        let bare = ApiError::from_response(
            status,
            b"<html>bad gateway</html>",
            Some("req_hdr".into()),
            None,
            None,
        );
        assert_eq!(bare.kind(), Some(&kind), "{status} without body");
        assert_eq!(bare.request_id(), Some("req_hdr"));
        assert_eq!(kind.as_str(), error_type);
        assert_eq!(ApiErrorKind::from_type(error_type), kind);
    }
    let odd = ApiError::from_response(418, b"", None, None, None);
    assert_eq!(odd.kind(), Some(&ApiErrorKind::Other("http_418".into())));
    assert_eq!(
        ApiErrorKind::from_type("new_error"),
        ApiErrorKind::Other("new_error".into())
    );
}

#[test]
fn header_request_id_wins_and_shows_in_message() {
    let e = ApiError::from_response(
        529,
        &body("overloaded_error", "Overloaded"),
        Some("req_hdr".into()),
        None,
        None,
    );
    assert_eq!(e.request_id(), Some("req_hdr"));
    let text = e.to_string();
    assert!(
        text.contains("529") && text.contains("Overloaded") && text.contains("req_hdr"),
        "{text}"
    );
}

#[test]
fn in_stream_error_event_maps() {
    let e = ApiError::from_stream_error(
        &ErrorBody {
            error_type: "overloaded_error".into(),
            message: "Overloaded".into(),
        },
        Some("r".into()),
    );
    assert_eq!(e.kind(), Some(&ApiErrorKind::Overloaded));
    assert!(e.is_retryable());
    let e = ApiError::from_stream_error(
        &ErrorBody {
            error_type: "invalid_request_error".into(),
            message: "x".into(),
        },
        None,
    );
    assert!(!e.is_retryable());
}

#[test]
fn missing_credentials_names_the_variables() {
    let text = ApiError::MissingCredentials.to_string();
    assert!(
        text.contains("ANTHROPIC_API_KEY") && text.contains("ANTHROPIC_AUTH_TOKEN"),
        "{text}"
    );
}

#[test]
fn parses_prompt_too_long() {
    let e = ApiError::from_response(
        400,
        &body(
            "invalid_request_error",
            "prompt is too long: 219898 tokens > 200000 maximum",
        ),
        None,
        None,
        None,
    );
    assert_eq!(e.prompt_too_long(), Some((219_898, 200_000)));
    assert_eq!(e.context_limit_exceeded(), None);
    assert_eq!(
        parse_prompt_too_long("prompt is too long: 1,234 tokens > 1,000 maximum"),
        Some((1234, 1000))
    );
    assert_eq!(
        parse_prompt_too_long("prompt is too long: many tokens"),
        None
    );
    assert_eq!(parse_prompt_too_long("something else"), None);
}

#[test]
fn parses_context_limit() {
    let message = "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again";
    let e = ApiError::from_response(
        400,
        &body("invalid_request_error", message),
        None,
        None,
        None,
    );
    assert_eq!(e.context_limit_exceeded(), Some((178_959, 64_000, 200_000)));
    assert_eq!(e.prompt_too_long(), None);
    assert_eq!(parse_context_limit("exceed context limit: 1 + x > 3"), None);
}

#[test]
fn retry_after_headers() {
    assert_eq!(
        parse_retry_after(Some("1500"), Some("9")),
        Some(Duration::from_millis(1500))
    );
    assert_eq!(
        parse_retry_after(None, Some("3")),
        Some(Duration::from_secs(3))
    );
    assert_eq!(
        parse_retry_after(Some("junk"), Some("2.5")),
        Some(Duration::from_millis(2500))
    );
    assert_eq!(
        parse_retry_after(None, Some("Wed, 21 Oct 2015 07:28:00 GMT")),
        None
    );
    assert_eq!(parse_retry_after(None, Some("-1")), None);
    assert_eq!(
        parse_retry_after(None, Some("1e300")),
        Some(Duration::from_secs(86_400))
    );
    assert_eq!(parse_retry_after(None, None), None);
}

#[test]
fn retryable_classification() {
    assert!(
        ApiError::Connection {
            message: "reset".into()
        }
        .is_retryable()
    );
    assert!(ApiError::IncompleteStream { request_id: None }.is_retryable());
    assert!(!ApiError::MissingCredentials.is_retryable());
    assert!(
        !ApiError::Decode {
            what: "x".into(),
            message: "y".into()
        }
        .is_retryable()
    );
}

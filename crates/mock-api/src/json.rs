//! Reading the fields of a raw JSON request the way the simulator's routes do: a missing
//! field, or one of another type, reads as empty (the checks have refused what must be there).

use serde_json::Value;

/// `value[key]` as a string; `""` when it is not one.
pub(crate) fn str_field<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// `value[key]` as an array's items; none when it is not one.
pub(crate) fn items<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

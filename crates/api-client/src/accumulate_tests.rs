use super::*;
use crate::events::ContentDelta;

#[test]
fn placeholder_replaced_below() {
    let _ = MessageAccumulator::new();
    let _ = ContentDelta::TextDelta {
        text: String::new(),
    };
}

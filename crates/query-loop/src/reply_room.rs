//! How much a reply may be (issue 37): a request asks for no more output than the model's
//! window leaves after its prompt, so an 8k local window never gets the 8,000 tokens Claude's
//! default asks; and for no less than a floor that still lets the model answer (the loop says
//! so when the window leaves less, and asks for the floor all the same).

use tine_api_client::ThinkingConfig;

use crate::plug::ReplyRoom;

/// The least `max_tokens` asked for: a reply needs room. Smaller windows get an eighth.
pub const MIN_REPLY_TOKENS: u64 = 1_024;

/// The prompt is counted a quarter bigger when the reply's room is worked out.
const PROMPT_MARGIN_DIVISOR: u64 = 4;

/// The floor of `max_tokens` for a `window`-token model: [`MIN_REPLY_TOKENS`], or an eighth of
/// a window below 8k.
pub fn reply_floor(window: u64) -> u64 {
    MIN_REPLY_TOKENS.min(window / 8).max(1)
}

/// `max_tokens` for a request wanting `wanted` whose prompt is about `prompt` tokens, on a
/// `window`-token model; with what was left when that is below the floor. A thinking budget
/// keeps `max_tokens` above it (the API refuses less).
pub(crate) fn fit(
    wanted: u32,
    thinking: Option<&ThinkingConfig>,
    prompt: u64,
    window: u64,
) -> (u32, Option<ReplyRoom>) {
    // A quarter more than the figure: it is mostly tine's estimate (4 bytes a token, where a
    // real tokenizer counts code and JSON nearer 3) and the server's chat template adds its
    // own tokens; a server refuses a request whose prompt and max_tokens pass the window.
    let room = window.saturating_sub(prompt + prompt / PROMPT_MARGIN_DIVISOR);
    let floor = reply_floor(window);
    let mut fitted = u64::from(wanted).min(room.max(floor));
    if let Some(ThinkingConfig::Enabled { budget_tokens }) = thinking {
        fitted = fitted.max(u64::from(*budget_tokens) + 1);
    }
    let fitted = u32::try_from(fitted).unwrap_or(wanted).max(1);
    let short = (room < floor && u64::from(wanted) > room).then_some(ReplyRoom {
        window,
        room,
        asked: u64::from(fitted),
    });
    (fitted, short)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_window_caps_the_reply_at_what_the_prompt_leaves() {
        // A 6,000-token prompt in 8,192 tokens with Claude's 8,000 default: what is left
        // after the prompt and a quarter more (the estimate's margin).
        assert_eq!(
            fit(8_000, None, 6_000, 8_192),
            (
                1_024,
                Some(ReplyRoom {
                    window: 8_192,
                    room: 692,
                    asked: 1_024
                })
            )
        );
        // A lean prompt leaves more.
        assert_eq!(fit(8_000, None, 1_900, 8_192), (5_817, None));
        // Room enough: the wanted figure.
        assert_eq!(fit(8_000, None, 50_000, 200_000), (8_000, None));
    }

    #[test]
    fn below_the_floor_the_floor_is_asked_and_said() {
        let (max, short) = fit(8_000, None, 6_400, 8_192);
        assert_eq!(max, 1_024);
        assert_eq!(
            short,
            Some(ReplyRoom {
                window: 8_192,
                room: 192,
                asked: 1_024
            })
        );
        // A prompt over the window leaves nothing.
        assert_eq!(fit(8_000, None, 9_000, 8_192).1.map(|r| r.room), Some(0));
        // Tiny windows: an eighth.
        assert_eq!(reply_floor(2_048), 256);
        assert_eq!(reply_floor(1_000_000), MIN_REPLY_TOKENS);
    }

    #[test]
    fn a_thinking_budget_stays_below_max_tokens() {
        let thinking = ThinkingConfig::Enabled {
            budget_tokens: 4_000,
        };
        assert_eq!(fit(12_000, Some(&thinking), 7_000, 8_192).0, 4_001);
    }
}

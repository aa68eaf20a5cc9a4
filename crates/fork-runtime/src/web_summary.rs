//! WebFetch's summarizer: a [`side_query`] to a small, fast model that answers the model's
//! prompt about a fetched page, so a whole page never lands in the main conversation.

use futures::future::BoxFuture;
use tine_api_client::{ContentBlock, Message};
use tine_tools::{SummarizerError, WebSummarizer, WebSummaryRequest};

use crate::side_query::SideModel;

/// The small model used when `ANTHROPIC_SMALL_FAST_MODEL` names none.
pub const DEFAULT_SMALL_FAST_MODEL: &str = "claude-haiku-5-5";
/// The query source WebFetch's summaries are recorded under.
pub const WEB_FETCH_QUERY_SOURCE: &str = "web_fetch";
const MAX_SUMMARY_TOKENS: u32 = 1_024;

const SYSTEM: &str = "You answer a question about one web page for a coding agent. Use only the \
page content given. Be concise and factual; quote exact values (versions, flags, code) verbatim. \
If the page does not answer the question, say so in one sentence.";

/// Summarizes pages with `side_query` on a small model (`WEB_FETCH_QUERY_SOURCE` in the ledger).
pub type SideQuerySummarizer = SideModel;

impl WebSummarizer for SideModel {
    fn summarize<'a>(
        &'a self,
        request: WebSummaryRequest<'a>,
    ) -> BoxFuture<'a, Result<String, SummarizerError>> {
        Box::pin(async move {
            let prompt = format!(
                "Web page: {}\n\n<page>\n{}\n</page>\n\nQuestion: {}",
                request.url, request.content, request.prompt
            );
            let query = self
                .query(
                    WEB_FETCH_QUERY_SOURCE,
                    vec![Message::user(vec![ContentBlock::text(prompt)])],
                )
                .with_system(SYSTEM)
                .with_max_tokens(MAX_SUMMARY_TOKENS);
            let result = self
                .ask(&query)
                .await
                .map_err(|e| Box::new(e) as SummarizerError)?;
            Ok(result.text)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tine_api_client::ScriptedClient;

    use super::*;
    use crate::side_query::UsageLedger;

    #[tokio::test]
    async fn the_small_model_answers_from_the_page_and_usage_is_recorded() {
        let client = ScriptedClient::new();
        client.push_message(ScriptedClient::text_reply("The latest version is 1.2.3."));
        let ledger = UsageLedger::default();
        let summarizer = SideQuerySummarizer::new(Arc::new(client.clone()), "claude-haiku-4-5")
            .with_ledger(ledger.clone());
        let answer = summarizer
            .summarize(WebSummaryRequest {
                url: "https://example.test/releases",
                prompt: "What is the latest version?",
                content: "Releases: 1.2.3 (latest), 1.2.2",
            })
            .await
            .unwrap();
        assert_eq!(answer, "The latest version is 1.2.3.");
        let sent = &client.requests()[0];
        assert_eq!(sent.model, "claude-haiku-4-5");
        assert!(sent.tools.is_empty());
        let body = String::from_utf8(sent.to_json_bytes()).unwrap();
        assert!(body.contains("Releases: 1.2.3 (latest)"));
        assert!(body.contains("What is the latest version?"));
        assert_eq!(ledger.get(WEB_FETCH_QUERY_SOURCE).unwrap().requests, 1);
    }

    #[tokio::test]
    async fn an_api_error_is_a_summarizer_error() {
        let client = ScriptedClient::new();
        client.push_error(tine_api_client::ApiError::Connection {
            message: "refused".into(),
        });
        let summarizer = SideQuerySummarizer::new(Arc::new(client), "m");
        let error = summarizer
            .summarize(WebSummaryRequest {
                url: "u",
                prompt: "p",
                content: "c",
            })
            .await
            .unwrap_err();
        assert!(error.to_string().contains("refused"), "{error}");
    }
}

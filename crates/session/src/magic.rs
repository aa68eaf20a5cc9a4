//! Magic Docs in the session (tine-memory's `magic_docs`): on unless `magicDocsEnabled` is
//! false or `--bare`. When on, the Read listener goes on the session's tool context (which the
//! engine and the forks' parent share; a fork's copy has none) and the job on the pipeline;
//! off, neither exists, so nothing is tracked, forked or sent.

use tine_config::settings::LoadedSettings;
use tine_memory::{MagicDocs, MagicDocsJob, MagicDocsOptions};
use tine_permissions::PermissionContext;
use tine_query_loop::QueryEngine;
use tine_tools::ToolContext;

use crate::protocol::Notice;

/// The job to register, with the listener installed on `tool_context`, or `None` when off.
pub(crate) fn install(
    loaded: &LoadedSettings,
    bare: bool,
    permissions: &PermissionContext,
    tool_context: &ToolContext,
    notices: &mut Vec<Notice>,
) -> Option<MagicDocsJob> {
    let (options, warning) = MagicDocsOptions::from_settings(loaded);
    notices.extend(warning.map(Notice::warning));
    if bare || !options.enabled {
        return None;
    }
    let docs = MagicDocs::new();
    tool_context.insert_ext(docs.listener());
    Some(MagicDocsJob::new(docs, Some(permissions)))
}

/// A resumed session tracks again the Magic Docs its transcript's Read calls showed.
pub(crate) fn resume(job: Option<&MagicDocsJob>, engine: &QueryEngine) {
    if let Some(job) = job {
        job.docs()
            .rebuild_from(engine.messages(), &engine.tool_context().cwd());
    }
}

//! [`AutoMemory`]: everything one main-thread session needs, made once at session start, so
//! the host's wiring is three calls: the context text, the job to register, recall per turn.

use std::sync::Arc;

use tine_api_client::ModelClient;
use tine_fork_runtime::{BackgroundJob, UsageLedger};
use tine_permissions::PermissionContext;
use tine_query_loop::TranscriptAnnotator;

use crate::dream::DreamJob;
use crate::dream_gate::DreamOptions;
use crate::error::MemoryError;
use crate::extract::{ExtractionJob, ExtractionOptions};
use crate::memdir::MemoryDir;
use crate::recall::{Recall, RecallAttachment, SessionMemories, SideQuerySelector};

/// Auto memory for one session.
pub struct AutoMemory {
    dir: MemoryDir,
    context: String,
    job: Arc<ExtractionJob>,
    dream: Option<Arc<DreamJob>>,
    recall: Recall,
    /// The session's permissions the forks' reads are judged against, when given.
    project: Option<PermissionContext>,
}

impl AutoMemory {
    /// [`AutoMemory::start_with`] the default [`ExtractionOptions`].
    pub fn start(
        dir: MemoryDir,
        client: Arc<dyn ModelClient>,
        model: &str,
        ledger: Option<UsageLedger>,
    ) -> Result<Self, MemoryError> {
        Self::start_with(
            dir,
            client,
            model,
            ledger,
            ExtractionOptions::default(),
            None,
        )
    }

    /// Creates the directory if needed, loads `MEMORY.md` once (the session's context text
    /// never changes afterwards), and prepares the extraction job and recall. Recall's side
    /// queries use `client` and `model` and are recorded in `ledger` when given (the
    /// extraction forks are recorded through the fork parent's ledger). What extraction saves
    /// is not offered back by this session's recall: it came from this conversation. With
    /// `project` (the session's permissions), the forks read only inside its directories and
    /// the memory directory, under its deny and ask rules; without, inside their own cwd.
    pub fn start_with(
        dir: MemoryDir,
        client: Arc<dyn ModelClient>,
        model: &str,
        ledger: Option<UsageLedger>,
        options: ExtractionOptions,
        project: Option<&PermissionContext>,
    ) -> Result<Self, MemoryError> {
        let learned = SessionMemories::new();
        let job = Arc::new(ExtractionJob::with_learned(
            dir.clone(),
            options,
            learned.clone(),
            project,
        )?);
        let context = dir.load_index_for_context().render();
        let mut selector = SideQuerySelector::new(client, model);
        if let Some(ledger) = ledger {
            selector = selector.with_ledger(ledger);
        }
        let recall = Recall::new(dir.path(), Arc::new(selector))
            .with_learned(learned)
            .with_context(context.as_str());
        Ok(Self {
            dir,
            context,
            job,
            dream: None,
            recall,
            project: project.cloned(),
        })
    }

    /// Adds auto dream, unless `options` turn it off.
    pub fn with_dream(mut self, options: DreamOptions) -> Result<Self, MemoryError> {
        if options.enabled {
            let job = match &self.project {
                Some(project) => DreamJob::for_project(self.dir.clone(), options, project)?,
                None => DreamJob::new(self.dir.clone(), options)?,
            };
            self.dream = Some(Arc::new(job));
        }
        Ok(self)
    }

    /// The dream job, when on (its task can be shown and killed).
    pub fn dream_job(&self) -> Option<Arc<DreamJob>> {
        self.dream.clone()
    }

    /// Every job to register on the session's `StopHookPipeline`: extraction, then dream.
    pub fn jobs(&self) -> Vec<Arc<dyn BackgroundJob>> {
        let mut jobs: Vec<Arc<dyn BackgroundJob>> = vec![self.extraction_job()];
        if let Some(dream) = &self.dream {
            jobs.push(Arc::clone(dream) as Arc<dyn BackgroundJob>);
        }
        jobs
    }

    /// The memory directory.
    pub fn dir(&self) -> &MemoryDir {
        &self.dir
    }

    /// The text to append once to the session's user context (or system prompt).
    pub fn context(&self) -> &str {
        &self.context
    }

    /// The job to register on the session's `StopHookPipeline` (`with_job`). It batches:
    /// `StopHookPipeline::flush` runs what it deferred (idle, exit), and
    /// [`ExtractionJob::before_compaction`] is the hook for compaction.
    pub fn extraction_job(&self) -> Arc<ExtractionJob> {
        Arc::clone(&self.job)
    }

    /// The session's recall.
    pub fn recall(&self) -> &Recall {
        &self.recall
    }

    /// Keeps what memory records in the session's transcript (extraction's cursor) there:
    /// give it the engine's annotator once the engine exists.
    pub fn record_in(&self, annotator: TranscriptAnnotator) {
        self.job.record_cursor_in(annotator);
    }

    /// The prompt to submit for `prompt`: the recalled memories (if any) before it. Recall
    /// failing never blocks a turn: it is logged and the prompt goes as it is.
    pub async fn prompt_with_recall(&self, prompt: &str) -> (String, Option<RecallAttachment>) {
        match self.recall.attachment_for(prompt).await {
            Ok(Some(attachment)) => (format!("{}\n\n{prompt}", attachment.text), Some(attachment)),
            Ok(None) => (prompt.to_owned(), None),
            Err(error) => {
                tracing::warn!(%error, "memory recall failed; the turn goes on without it");
                (prompt.to_owned(), None)
            }
        }
    }
}

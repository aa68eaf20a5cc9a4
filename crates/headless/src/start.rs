//! Starting the session, for every input format: a settings refusal says everything that was
//! wrong first.

use tine_session::{Event, Session, SessionHandle, SessionOptions, StartError};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::config::HeadlessError;

/// Starts the session; a settings refusal says everything that was wrong first.
pub(crate) async fn start(
    options: SessionOptions,
) -> Result<(SessionHandle, UnboundedReceiver<Event>), HeadlessError> {
    match Session::start(options).await {
        Ok(started) => Ok(started),
        Err(StartError::Settings {
            warnings,
            errors,
            refusal,
        }) => {
            for warning in warnings {
                eprintln!("tine: warning: {warning}");
            }
            for error in errors {
                eprintln!("tine: error: {error}");
            }
            Err(HeadlessError::Refused(refusal))
        }
        Err(error) => Err(error.into()),
    }
}

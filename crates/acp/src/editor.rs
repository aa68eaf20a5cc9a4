//! The editor's files: when the client offers `fs/read_text_file` and `fs/write_text_file`,
//! Read, Write and Edit go through it ([`tine_session::EditorFiles`]), so the model sees unsaved
//! buffers and the editor applies and tracks the edits. The permission engine has decided
//! before a call gets here.

use std::path::Path;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ReadTextFileRequest, SessionId, WriteTextFileRequest,
};
use tine_session::{EditorFiles, EditorFuture};

/// One session's view of the editor's files.
pub(crate) struct EditorFs {
    connection: ConnectionTo<Client>,
    session: SessionId,
}

impl EditorFs {
    /// The editor's files for `session`, when the client offers both reading and writing.
    pub(crate) fn offered(
        capabilities: &ClientCapabilities,
        connection: &ConnectionTo<Client>,
        session: &SessionId,
    ) -> Option<Self> {
        (capabilities.fs.read_text_file && capabilities.fs.write_text_file).then(|| Self {
            connection: connection.clone(),
            session: session.clone(),
        })
    }
}

impl EditorFiles for EditorFs {
    fn read_text<'a>(&'a self, path: &'a Path) -> EditorFuture<'a, String> {
        Box::pin(async move {
            let request = ReadTextFileRequest::new(self.session.clone(), path.to_path_buf());
            self.connection
                .send_request(request)
                .block_task()
                .await
                .map(|response| response.content)
                .map_err(|error| format!("the editor could not read {}: {error}", path.display()))
        })
    }

    fn write_text<'a>(&'a self, path: &'a Path, text: &'a str) -> EditorFuture<'a, ()> {
        Box::pin(async move {
            let request = WriteTextFileRequest::new(self.session.clone(), path.to_path_buf(), text);
            self.connection
                .send_request(request)
                .block_task()
                .await
                .map(|_| ())
                .map_err(|error| format!("the editor could not write {}: {error}", path.display()))
        })
    }
}

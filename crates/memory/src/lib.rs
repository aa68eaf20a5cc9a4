//! tine-memory: automatic memory (seed 001 §16.2.4 ①, seed 000 §七–§八, seed 003 §十). Tell
//! tine once that the project uses React 18 and PostgreSQL, and the next session knows.
//!
//! Modules in reading order:
//! - [`memdir`]: where the memory directory is (`TINE_MEMORY_DIR`, `autoMemoryDirectory`, or
//!   `$TINE_HOME/projects/<project>/memory`), whether auto memory is on, and `MEMORY.md` as
//!   loaded into the context once per session.
//! - [`topic`]: topic files (frontmatter `name`, `description`, `type`), the tolerant scan,
//!   index lines, saving a memory.
//! - [`sandbox`]: [`MemorySandbox`], the memory forks' `can_use_tool`.
//! - [`error`]: the crate's typed errors ([`MemoryError`]).

pub mod error;
pub mod memdir;
pub mod sandbox;
pub mod topic;

pub use error::MemoryError;
pub use memdir::{
    DirSource, INDEX_FILE, IndexForContext, IndexTruncation, MAX_INDEX_BYTES, MAX_INDEX_LINE_CHARS,
    MAX_INDEX_LINES, MemoryDir, MemoryEnv, MemoryResolution, default_memory_dir,
    resolve_memory_dir, write_atomic,
};
pub use sandbox::MemorySandbox;
pub use topic::{
    Frontmatter, MemoryHeader, MemoryIssue, MemoryType, NewMemory, Scan, check_file_name,
    index_line, parse_frontmatter, render_topic, save_memory, scan_memories,
};

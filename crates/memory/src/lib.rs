//! tine-memory: will own automatic memory: the memory directory and `MEMORY.md` index,
//! extraction after each turn, consolidation ("dream") under a lock, and recall.

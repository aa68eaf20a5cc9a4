//! tine-compaction: will own compaction of long conversations: automatic (before a request
//! crosses the threshold), reactive (on `prompt is too long`) and manual, run as a fork.

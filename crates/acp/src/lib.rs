//! tine-acp: `tine acp`, a front end of the session protocol for editors over the Agent Client
//! Protocol.
#![warn(missing_docs, unnameable_types)]

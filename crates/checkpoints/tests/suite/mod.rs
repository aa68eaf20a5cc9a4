mod rewind;
mod safety;
mod sessions;
mod snapshot;
mod support;

mod app_states;
mod event_loop;
mod snapshots;
mod support;

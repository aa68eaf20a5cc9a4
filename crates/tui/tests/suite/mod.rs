mod app_states;
mod background_ui;
mod event_loop;
mod snapshots;
mod support;
mod thinking;
mod tasks_and_compaction;

mod app_states;
mod background_ui;
mod event_loop;
mod plan_and_commands;
mod snapshots;
mod support;
mod tasks_and_compaction;
mod thinking;

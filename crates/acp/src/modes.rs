//! tine's permission modes as ACP session modes: the editor's mode picker lists them and
//! `session/set_mode` switches between them. bypassPermissions is offered only where the command
//! line would allow it (not as root outside a sandbox), and never when settings disable it (the
//! session refuses it then).

use agent_client_protocol::v1::schema::{SessionMode, SessionModeId, SessionModeState};
use tine_session::PermissionMode;

/// The modes an editor may switch to, in the order Claude Code cycles them.
const MODES: [(PermissionMode, &str, &str); 4] = [
    (
        PermissionMode::Default,
        "Default",
        "Asks before edits and commands the rules do not allow",
    ),
    (
        PermissionMode::AcceptEdits,
        "Accept Edits",
        "Edits in the project without asking; commands still ask",
    ),
    (
        PermissionMode::Plan,
        "Plan Mode",
        "Reads and plans; changes nothing until the plan is approved",
    ),
    (
        PermissionMode::BypassPermissions,
        "Bypass Permissions",
        "Runs everything without asking (deny rules still hold)",
    ),
];

/// The mode named by an ACP mode id.
pub(crate) fn parse(id: &str) -> Option<PermissionMode> {
    MODES
        .iter()
        .map(|(mode, _, _)| *mode)
        .chain([PermissionMode::DontAsk])
        .find(|mode| mode.as_str() == id)
}

/// The modes offered, with `current` selected.
pub(crate) fn state(current: PermissionMode, bypass_allowed: bool) -> SessionModeState {
    let available = MODES
        .iter()
        .filter(|(mode, _, _)| bypass_allowed || *mode != PermissionMode::BypassPermissions)
        .map(|(mode, name, description)| {
            SessionMode::new(SessionModeId::new(mode.as_str()), *name)
                .description(Some((*description).to_owned()))
        })
        .collect();
    SessionModeState::new(SessionModeId::new(current.as_str()), available)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_modes_are_offered_and_read_back() {
        let state = state(PermissionMode::Plan, true);
        let wire = serde_json::to_value(&state).unwrap();
        assert_eq!(wire["currentModeId"], "plan");
        let ids: Vec<&str> = wire["availableModes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["default", "acceptEdits", "plan", "bypassPermissions"]);
        for id in ids {
            assert_eq!(parse(id).map(PermissionMode::as_str), Some(id));
        }
        assert_eq!(parse("yolo"), None);
        let without = serde_json::to_value(super::state(PermissionMode::Default, false)).unwrap();
        assert_eq!(without["availableModes"].as_array().unwrap().len(), 3);
    }
}

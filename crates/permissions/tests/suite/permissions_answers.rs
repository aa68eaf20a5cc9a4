//! From settings on disk to a decision, an answer, and the rule persisted for the next session.

use std::fs;

use serde_json::json;
use tine_config::SettingsPaths;
use tine_config::settings::load;
use tine_permissions::{
    AskResolution, DenialLog, PermissionContext, PermissionDecision, PermissionQuery,
    PersistDestination,
};
use tine_permissions::{PermissionTarget, ToolVerdict};

fn decide(context: &PermissionContext, command: &str) -> PermissionDecision {
    let target = PermissionTarget::Bash {
        command: command.to_string(),
        cwd: context.cwd.clone(),
    };
    context.decide(&PermissionQuery {
        tool: "Bash",
        target: &target,
        verdict: &ToolVerdict::Passthrough,
        is_read_only: tine_permissions::is_read_only_command(command),
    })
}

#[test]
fn always_allow_persists_to_local_settings_and_applies_next_session() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("proj");
    fs::create_dir_all(cwd.join(".tine")).unwrap();
    let paths = SettingsPaths::new(&cwd, &dir.path().join("home"))
        .with_managed(dir.path().join("managed.json"));
    fs::write(
        &paths.local,
        r#"{"model": "keep-me", "permissions": {"deny": ["Bash(rm:*)"]}}"#,
    )
    .unwrap();
    fs::write(
        &paths.managed,
        r#"{"permissions": {"ask": ["Bash(npm publish:*)"]}}"#,
    )
    .unwrap();

    let (mut context, errors) = PermissionContext::from_settings(&load(&paths), &cwd, None, None);
    assert!(errors.is_empty());
    let PermissionDecision::Ask {
        always: Some(always),
        ..
    } = decide(&context, "npm run build")
    else {
        panic!("expected an ask");
    };
    let mut denials = DenialLog::default();
    let answer = AskResolution::AlwaysAllow {
        rules: always.rules().to_vec(),
        destination: PersistDestination::default(),
    };
    assert!(
        context
            .apply_answer(
                &answer,
                "Bash",
                &json!({"command": "npm run build"}),
                &paths,
                &mut denials
            )
            .unwrap()
    );
    assert!(
        decide(&context, "npm run build -- --prod").is_allow(),
        "applies at once"
    );

    let written: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&paths.local).unwrap()).unwrap();
    assert_eq!(written["model"], json!("keep-me"));
    assert_eq!(written["permissions"]["allow"], json!(["Bash(npm run:*)"]));

    let (next, _) = PermissionContext::from_settings(&load(&paths), &cwd, None, None);
    assert!(
        decide(&next, "npm run build").is_allow(),
        "persisted for the next session"
    );
    assert!(
        decide(&next, "npm run build && rm -rf /").is_deny(),
        "local deny still wins"
    );
    assert!(
        decide(&next, "npm publish").is_ask(),
        "managed ask still asks"
    );
}

#[test]
fn always_allow_keeps_the_comments_and_trailing_commas_of_the_settings_file() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("proj");
    fs::create_dir_all(cwd.join(".tine")).unwrap();
    let paths = SettingsPaths::new(&cwd, &dir.path().join("home"))
        .with_managed(dir.path().join("managed.json"));
    let text = "{\n  // never rm here\n  \"permissions\": {\n    \"deny\": [\"Bash(rm:*)\",], /* keep */\n  },\n}\n";
    fs::write(&paths.local, text).unwrap();
    let (mut context, errors) = PermissionContext::from_settings(&load(&paths), &cwd, None, None);
    assert!(errors.is_empty(), "{errors:?}");
    let PermissionDecision::Ask {
        always: Some(always),
        ..
    } = decide(&context, "npm run build")
    else {
        panic!("expected an ask");
    };
    let answer = AskResolution::AlwaysAllow {
        rules: always.rules().to_vec(),
        destination: PersistDestination::Local,
    };
    context
        .apply_answer(
            &answer,
            "Bash",
            &json!({"command": "npm run build"}),
            &paths,
            &mut DenialLog::default(),
        )
        .unwrap();
    let written = fs::read_to_string(&paths.local).unwrap();
    for kept in ["// never rm here", "[\"Bash(rm:*)\",], /* keep */"] {
        assert!(written.contains(kept), "lost {kept:?}:\n{written}");
    }
    let (next, errors) = PermissionContext::from_settings(&load(&paths), &cwd, None, None);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(decide(&next, "npm run build").is_allow(), "{written}");
    assert!(decide(&next, "rm -rf x").is_deny(), "{written}");
}

#[test]
fn rejections_and_never_allow_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().to_path_buf();
    let paths =
        SettingsPaths::new(&cwd, &dir.path().join("home")).with_managed(dir.path().join("m.json"));
    let mut context = PermissionContext::new(Default::default(), &cwd);
    let mut denials = DenialLog::default();
    let input = json!({"command": "curl x"});
    let reject = AskResolution::Reject {
        feedback: Some("use the API client".into()),
    };
    assert!(
        !context
            .apply_answer(&reject, "Bash", &input, &paths, &mut denials)
            .unwrap()
    );
    let never = AskResolution::NeverAllow {
        rules: vec!["Bash(curl:*)".parse().unwrap()],
        destination: PersistDestination::User,
    };
    assert!(
        !context
            .apply_answer(&never, "Bash", &input, &paths, &mut denials)
            .unwrap()
    );
    assert_eq!(denials.count_for("Bash"), 2);
    assert_eq!(
        denials.entries()[0].feedback.as_deref(),
        Some("use the API client")
    );
    assert_eq!(denials.entries()[0].input, input);
    assert!(decide(&context, "curl y").is_deny());
    let user: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&paths.user).unwrap()).unwrap();
    assert_eq!(user["permissions"]["deny"], json!(["Bash(curl:*)"]));
}

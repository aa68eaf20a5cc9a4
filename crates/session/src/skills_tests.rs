use super::*;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn skills_come_from_the_user_then_the_project_up_to_the_repository_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let cwd = root.join("crates/a");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    let home = dir.path().join("home");
    let tine_home = home.join(".tine");
    write(
        &cwd.join(".tine/skills/deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Deploy from here\n---\nNear body",
    );
    // A farther folder does not win a name the nearer one has.
    write(
        &root.join(".claude/skills/deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Deploy from the root\n---\nFar body",
    );
    write(
        &root.join(".claude/skills/pdf/SKILL.md"),
        "---\ndescription: \"Fill PDF forms\"\nallowed-tools:\n  - Read\n  - Bash(python3 scripts/fill.py:*)\n---\nUse scripts/fill.py",
    );
    write(&root.join(".claude/skills/pdf/scripts/fill.py"), "print()");
    write(
        &tine_home.join("skills/notes/SKILL.md"),
        "---\nname: notes\ndescription: >\n  Take notes\n  in markdown\n---\nNotes body",
    );
    write(
        &home.join(".claude/skills/claude-only/SKILL.md"),
        "---\ndescription: From Claude Code's folder\n---\nBody",
    );
    // The user's skill wins a name over the project's (Claude Code: personal over project).
    write(
        &cwd.join(".claude/skills/notes/SKILL.md"),
        "---\nname: notes\ndescription: The repository's notes\n---\nRepo notes",
    );
    // Above the repository root: not read.
    write(
        &dir.path().join(".tine/skills/outside/SKILL.md"),
        "---\ndescription: outside\n---\nBody",
    );
    let (skills, warnings) = load(&skill_dirs(&cwd, &tine_home, Some(&home)));
    assert_eq!(warnings, []);
    let names: Vec<_> = skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["claude-only", "deploy", "notes", "pdf"]);
    assert_eq!(skills[1].description, "Deploy from here");
    assert_eq!(skills[1].body, "Near body");
    assert_eq!(skills[1].scope, SkillScope::Project);
    assert_eq!(skills[2].description, "Take notes in markdown");
    assert_eq!(skills[2].scope, SkillScope::User);
    let pdf = &skills[3];
    assert_eq!(pdf.name, "pdf", "the folder names a skill without `name`");
    assert_eq!(
        pdf.allowed_tools,
        ["Read", "Bash(python3 scripts/fill.py:*)"]
    );
    assert_eq!(
        other_files(&pdf.dir),
        [root.join(".claude/skills/pdf/scripts/fill.py")]
    );
}

#[test]
fn a_malformed_skill_is_skipped_with_a_warning_naming_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let skills_dir = dir.path().join(".tine/skills");
    write(
        &skills_dir.join("good/SKILL.md"),
        "---\ndescription: ok\n---\nDo it",
    );
    write(&skills_dir.join("no-front/SKILL.md"), "Just text");
    write(
        &skills_dir.join("unclosed/SKILL.md"),
        "---\ndescription: x\nbody",
    );
    write(
        &skills_dir.join("no-desc/SKILL.md"),
        "---\nname: no-desc\n---\nBody",
    );
    write(
        &skills_dir.join("bad-name/SKILL.md"),
        "---\nname: bad name\ndescription: x\n---\nBody",
    );
    // Not a skill at all: no warning.
    write(&skills_dir.join("shared/helper.sh"), "echo");
    let (skills, warnings) = load(&skill_dirs(dir.path(), &dir.path().join("th"), None));
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0].name, "good");
    let paths: Vec<_> = warnings.iter().map(|w| w.path.clone()).collect();
    assert_eq!(
        paths,
        ["bad-name", "no-desc", "no-front", "unclosed"]
            .map(|n| skills_dir.join(n).join("SKILL.md"))
    );
    let text = warnings[1].to_string();
    assert!(
        text.contains("no-desc/SKILL.md") && text.contains("description"),
        "{text}"
    );
    assert!(text.ends_with("(skill skipped)"), "{text}");
}

#[test]
fn the_listing_has_names_and_descriptions_never_bodies() {
    let skill = parse_skill(
        "---\nname: review\ndescription: Review a diff\n  carefully\n---\nSECRET BODY $ARGUMENTS",
        Path::new("/p/.tine/skills/review"),
        SkillScope::Project,
    )
    .unwrap();
    let text = listing(std::slice::from_ref(&skill));
    assert!(text.starts_with("<system-reminder>\n"), "{text}");
    assert!(
        text.contains("- review: Review a diff carefully\n"),
        "{text}"
    );
    assert!(!text.contains("SECRET"), "{text}");
    assert_eq!(listing(&[]), "");
    let invoked = invocation_text(&skill, "src/main.rs");
    assert_eq!(
        invoked,
        "Base directory for this skill: /p/.tine/skills/review\n\nSECRET BODY src/main.rs"
    );
}

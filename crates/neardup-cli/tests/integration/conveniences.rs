//! What users of mature command-line tools expect (issue 46): shell completions, man pages,
//! a configuration file under the environment and the flags, and a note when an `id` field
//! goes unused.

use std::path::Path;
use std::process::{Command, Output};

use crate::util::{example, json_file, path, stderr};

/// `neardup args` run in `cwd` with `vars` set and no other `NEARDUP_*` variable.
fn neardup_in(cwd: &Path, vars: &[(&str, &str)], args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_neardup"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("NEARDUP_") {
            command.env_remove(name);
        }
    }
    command
        .envs(vars.iter().copied())
        .args(args)
        .current_dir(cwd);
    command.output().expect("neardup runs")
}

/// Whether a program is installed; outside CI a missing one skips the test with a message.
fn installed(program: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "{program} is not installed (CI)"
        );
        eprintln!("skipped: {program} is not installed");
    }
    found
}

#[test]
fn bash_completion_loads_and_completes_commands_and_flags() {
    if !installed("bash") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let output = neardup_in(dir.path(), &[], &["completions", "bash"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let script = path(dir.path(), "neardup.bash");
    std::fs::write(&script, &output.stdout).unwrap();
    let complete = |words: &str, current: usize| {
        let program = format!(
            "source {script} && COMP_WORDS=({words}) && COMP_CWORD={current} && \
             _neardup neardup \"${{COMP_WORDS[{current}]}}\" \"${{COMP_WORDS[{}]}}\" && \
             echo \"${{COMPREPLY[@]}}\"",
            current - 1
        );
        let output = Command::new("bash")
            .args(["-c", &program])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    };
    assert_eq!(complete("neardup de", 1), "dedup");
    assert_eq!(complete("neardup dedup --thr", 2), "--threads --threshold");
    assert_eq!(complete("neardup completions f", 2), "fish");
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let output = neardup_in(dir.path(), &[], &["completions", shell]);
        let script = String::from_utf8(output.stdout).unwrap();
        assert!(
            output.status.success() && script.contains("dedup"),
            "{shell}"
        );
    }
    let output = neardup_in(dir.path(), &[], &["completions", "tcsh"]);
    assert!(stderr(&output).contains("[possible values: bash, elvish, fish, powershell, zsh]"));
}

#[test]
fn man_pages_render_with_man() {
    if !installed("man") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let render = |page: &str| {
        let output = Command::new("man")
            .args(["-l", page])
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        assert!(output.status.success(), "{page}: {}", stderr(&output));
        // Words as man justifies them, one space apart.
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let output = neardup_in(dir.path(), &[], &["man"]);
    let page = path(dir.path(), "neardup.1");
    std::fs::write(&page, &output.stdout).unwrap();
    let text = render(&page);
    assert!(
        text.contains("NAME") && text.contains("neardup-dedup(1)"),
        "{text}"
    );
    let output = neardup_in(dir.path(), &[], &["man", "dedup"]);
    std::fs::write(&page, &output.stdout).unwrap();
    let text = render(&page);
    assert!(
        text.contains("neardup-dedup - Remove exact and near-duplicate documents"),
        "{text}"
    );
    assert!(text.contains("--memory-limit"), "{text}");
    let pages = path(dir.path(), "pages");
    assert!(neardup_in(dir.path(), &[], &["man", "--dir", &pages])
        .status
        .success());
    for name in [
        "neardup.1",
        "neardup-dedup.1",
        "neardup-serve.1",
        "neardup-client-load.1",
    ] {
        render(&path(Path::new(&pages), name));
    }
    let output = neardup_in(dir.path(), &[], &["man", "dedpu"]);
    assert!(stderr(&output)
        .contains("\"dedpu\" is not a command; the commands are dedup, spans, report"));
}

/// Flags win over `NEARDUP_*` variables, which win over `neardup.toml`, which wins over the
/// defaults; the file is found in a parent folder, `--config` and `--no-config` choose.
#[test]
fn a_configuration_file_gives_way_to_the_environment_and_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let cwd = project.join("data");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::write(
        project.join("neardup.toml"),
        "quiet = true\n[dedup]\nid-field = \"id\"\nthreshold = 0.9\n",
    )
    .unwrap();
    let stats = path(dir.path(), "stats.json");
    let kept = path(dir.path(), "kept.jsonl");
    let example = example();
    let threshold = |vars: &[(&str, &str)], more: &[&str]| {
        let args = [
            &["dedup", &example, "-o", &kept, "--stats", &stats][..],
            more,
        ]
        .concat();
        let output = neardup_in(&cwd, vars, &args);
        assert!(output.status.success(), "{}", stderr(&output));
        // quiet = true: no summary, and no note about the id field (id-field = "id").
        assert_eq!(stderr(&output), "", "{args:?}");
        json_file(&stats)["method"]["threshold"].as_f64().unwrap()
    };
    assert_eq!(threshold(&[], &[]), 0.9);
    assert_eq!(threshold(&[("NEARDUP_THRESHOLD", "0.5")], &[]), 0.5);
    assert_eq!(
        threshold(&[("NEARDUP_THRESHOLD", "0.5")], &["--threshold", "0.6"]),
        0.6
    );
    assert_eq!(threshold(&[], &["--threshold=0.7"]), 0.7);
    let other = path(dir.path(), "other.toml");
    std::fs::write(
        &other,
        "[dedup]\nthreshold = 0.8\nquiet = true\nid-field = \"id\"\n",
    )
    .unwrap();
    assert_eq!(threshold(&[], &["--config", &other]), 0.8);
    assert_eq!(threshold(&[("NEARDUP_CONFIG", other.as_str())], &[]), 0.8);
    // Without the file: the default, and the summary.
    let output = neardup_in(
        &cwd,
        &[],
        &[
            "dedup",
            &example,
            "-o",
            &kept,
            "--no-config",
            "--stats",
            &stats,
        ],
    );
    assert!(
        stderr(&output).contains("227 documents, 187 kept"),
        "{}",
        stderr(&output)
    );
    std::fs::write(project.join("neardup.toml"), "[dedup]\nthreshhold = 0.9\n").unwrap();
    let output = neardup_in(&cwd, &[], &["dedup", &example, "-o", &kept]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).ends_with(
            "neardup.toml: [dedup] \"threshhold\" is not an option of `neardup dedup`; did you \
             mean \"threshold\"?\n"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
fn an_id_field_left_unused_is_noted() {
    let dir = tempfile::tempdir().unwrap();
    let kept = path(dir.path(), "kept.jsonl");
    let example = example();
    let note = "note: the records have an \"id\" field, but without --id-field the ids are \
                record numbers (1, 2, ...); give --id-field id to use it";
    let output = neardup_in(dir.path(), &[], &["dedup", &example, "-o", &kept]);
    assert!(stderr(&output).contains(note), "{}", stderr(&output));
    for more in [&["--id-field", "id"][..], &["-q"]] {
        let args = [&["dedup", &example, "-o", &kept][..], more].concat();
        let output = neardup_in(dir.path(), &[], &args);
        assert!(!stderr(&output).contains("note:"), "{more:?}");
    }
}

/// A client with no service to talk to says where it looked and how to point it elsewhere;
/// the client's options may follow its command (`client list --url ...`).
#[test]
fn a_client_without_a_service_says_where_it_looked() {
    let dir = tempfile::tempdir().unwrap();
    let output = neardup_in(
        dir.path(),
        &[],
        &["client", "list", "--url", "http://127.0.0.1:1"],
    );
    assert!(!output.status.success());
    assert!(
        stderr(&output).starts_with(
            "neardup: error: no service at http://127.0.0.1:1: start one (`neardup serve \
             --data-dir DIR`), or point the client at it with --url or NEARDUP_URL: "
        ),
        "{}",
        stderr(&output)
    );
}

//! Options a team fixes once: a `neardup.toml` file and `NEARDUP_<OPTION>` environment
//! variables, under the command line.
//!
//! Precedence, highest first: the command line, the environment, the file, the built-in
//! defaults. The file is `--config FILE`, else `$NEARDUP_CONFIG`, else the first
//! `neardup.toml` found in the current folder or one of its parents; `--no-config` (or
//! `NEARDUP_CONFIG=""`) reads none. In the file, top-level keys apply to every command
//! that has the option, and a table named after a command (`[dedup]`, `[serve]`,
//! `[client]`) applies to that command only and wins over the top level:
//!
//! ```toml
//! threads = 4
//!
//! [dedup]
//! id-field = "id"
//! threshold = 0.5
//! memory-limit = "8G"
//!
//! [serve]
//! data-dir = "/var/lib/neardup"
//! ```
//!
//! Keys are the long option names (`id-field` or `id_field`). The variable of an option is
//! `NEARDUP_` and its name in capitals with `_` for `-`: `NEARDUP_MEMORY_LIMIT=8G`. Both are
//! turned into options (`--memory-limit=8G`) placed before the command line's own, so that
//! clap reads everything once and the last occurrence wins (`args_override_self`); an option
//! that may repeat takes the values of the highest source that gives it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, Command};

/// The file looked for in the current folder and its parents.
pub const FILE_NAME: &str = "neardup.toml";

/// Variables that are not options: the test and bench harnesses' and the token's.
const NOT_OPTIONS: &[&str] = &["CONFIG", "TOKEN"];

/// One option to add in front of the command line's own.
#[derive(Debug)]
struct Given {
    long: String,
    /// The values (none for a flag), each one occurrence.
    values: Vec<String>,
}

/// The command line with the options of the configuration file and of the environment
/// placed after the command's name (`neardup dedup` or `neardup client`), before the
/// options given.
///
/// # Errors
/// A file that cannot be read or parsed, a key that is not an option of the command (with
/// the nearest name), a value of the wrong kind, a variable that is not a flag's `true` or
/// `false`; each names the file and key, or the variable.
pub fn layered(
    command: &Command,
    argv: Vec<OsString>,
    cwd: &Path,
    var: &dyn Fn(&str) -> Option<OsString>,
) -> Result<Vec<OsString>, String> {
    let Some(name) = argv.get(1).and_then(|a| a.to_str()) else {
        return Ok(argv);
    };
    let Some(sub) = command
        .get_subcommands()
        .find(|sub| sub.get_name() == name || sub.get_all_aliases().any(|a| a == name))
    else {
        return Ok(argv);
    };
    let rest = &argv[2..];
    let mut given = Vec::new();
    if let Some(path) = config_path(rest, cwd, var)? {
        given.extend(from_file(command, sub, &path)?);
    }
    for option in from_environment(sub, var)? {
        // The environment's values replace the file's.
        given.retain(|g: &Given| g.long != option.long);
        given.push(option);
    }
    let mut layered = argv[..2].to_vec();
    for option in given {
        let arg = find_long(sub, &option.long).expect("checked when read");
        if repeats(arg) && mentioned(rest, arg) {
            continue; // the command line's own values replace the file's and the environment's
        }
        if option.values.is_empty() {
            layered.push(format!("--{}", option.long).into());
        }
        for value in option.values {
            layered.push(format!("--{}={value}", option.long).into());
        }
    }
    layered.extend(rest.iter().cloned());
    Ok(layered)
}

/// The configuration file: `--config FILE`, `NEARDUP_CONFIG`, or `neardup.toml` found
/// upwards from `cwd`; none with `--no-config` or an empty `NEARDUP_CONFIG`.
fn config_path(
    rest: &[OsString],
    cwd: &Path,
    var: &dyn Fn(&str) -> Option<OsString>,
) -> Result<Option<PathBuf>, String> {
    let mut given = None;
    let mut args = rest.iter().take_while(|a| *a != "--");
    while let Some(arg) = args.next() {
        if arg == "--no-config" {
            return Ok(None);
        }
        if arg == "--config" {
            let path = args.next().ok_or("--config: give the configuration file")?;
            given = Some(PathBuf::from(path));
        } else if let Some(path) = arg.to_str().and_then(|a| a.strip_prefix("--config=")) {
            given = Some(PathBuf::from(path));
        }
    }
    if let Some(path) = given {
        check_file(&path, "--config ")?;
        return Ok(Some(path));
    }
    if let Some(path) = var("NEARDUP_CONFIG") {
        if path.is_empty() {
            return Ok(None);
        }
        let path = PathBuf::from(path);
        check_file(&path, "NEARDUP_CONFIG=")?;
        return Ok(Some(path));
    }
    Ok(cwd
        .ancestors()
        .map(|folder| folder.join(FILE_NAME))
        .find(|candidate| candidate.is_file()))
}

/// Refuses a configuration file that is missing or not a regular file (a FIFO, a device, a
/// folder): it is read whole before anything runs.
fn check_file(path: &Path, named: &str) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(metadata) if metadata.is_file() => Ok(()),
        Ok(_) => Err(format!("{named}{}: not a regular file", path.display())),
        Err(_) => Err(format!("{named}{}: no such file", path.display())),
    }
}

/// The options file `path` gives command `sub`.
fn from_file(root: &Command, sub: &Command, path: &Path) -> Result<Vec<Given>, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("{shown}: not TOML: {}", e.message()))?;
    let mut top = Vec::new();
    let mut own = Vec::new();
    for (key, value) in &table {
        if let toml::Value::Table(section) = value {
            let Some(command) = root.get_subcommands().find(|c| c.get_name() == key) else {
                let names = root.get_subcommands().map(|c| c.get_name().to_owned());
                return Err(format!(
                    "{shown}: [{key}] is not a command{}",
                    nearest(key, names)
                ));
            };
            for (key, value) in section {
                let arg = option_of(command, key).ok_or_else(|| {
                    format!(
                        "{shown}: [{}] {key:?} is not an option of `neardup {}`{}",
                        command.get_name(),
                        command.get_name(),
                        nearest(key, longs(command))
                    )
                })?;
                let option = given(arg, value)
                    .map_err(|why| format!("{shown}: [{}] {key}: {why}", command.get_name()))?;
                if command.get_name() == sub.get_name() {
                    own.extend(option);
                }
            }
            continue;
        }
        let everywhere = root
            .get_subcommands()
            .filter_map(|c| option_of(c, key))
            .count();
        if everywhere == 0 {
            let all = root.get_subcommands().flat_map(longs);
            return Err(format!(
                "{shown}: {key:?} is not an option of any command{}",
                nearest(key, all)
            ));
        }
        for command in root.get_subcommands() {
            if let Some(arg) = option_of(command, key) {
                let option = given(arg, value).map_err(|why| format!("{shown}: {key}: {why}"))?;
                if command.get_name() == sub.get_name() {
                    top.extend(option);
                }
            }
        }
    }
    // A command's own table wins over the top level.
    top.retain(|t| !own.iter().any(|o| o.long == t.long));
    top.extend(own);
    Ok(top)
}

/// The options the environment gives command `sub`: `NEARDUP_MEMORY_LIMIT` for
/// `--memory-limit`.
fn from_environment(
    sub: &Command,
    var: &dyn Fn(&str) -> Option<OsString>,
) -> Result<Vec<Given>, String> {
    let mut found = Vec::new();
    for arg in options(sub) {
        let long = arg.get_long().expect("options have long names");
        let name = variable(long);
        if NOT_OPTIONS.contains(&&name["NEARDUP_".len()..]) {
            continue;
        }
        let Some(value) = var(&name) else { continue };
        let value = value
            .into_string()
            .map_err(|v| format!("{name}={}: not UTF-8", v.to_string_lossy()))?;
        if value.is_empty() {
            continue;
        }
        let value = if takes_value(arg) {
            toml::Value::String(value)
        } else {
            match value.as_str() {
                "1" | "true" | "yes" | "on" => toml::Value::Boolean(true),
                "0" | "false" | "no" | "off" => toml::Value::Boolean(false),
                _ => {
                    return Err(format!(
                        "{name}={value}: --{long} is a flag: expected true or false (1 or 0)"
                    ))
                }
            }
        };
        found.extend(given(arg, &value).map_err(|why| format!("{name}: {why}"))?);
    }
    Ok(found)
}

/// The variable of option `long`: `NEARDUP_` and the name in capitals, `_` for `-`.
pub fn variable(long: &str) -> String {
    format!("NEARDUP_{}", long.to_ascii_uppercase().replace('-', "_"))
}

/// `value` as the occurrences of option `arg`; `None` for a flag set to false (a flag not
/// given).
fn given(arg: &Arg, value: &toml::Value) -> Result<Option<Given>, String> {
    let long = arg.get_long().expect("options have long names").to_owned();
    let scalar = |value: &toml::Value| -> Result<String, String> {
        match value {
            toml::Value::String(s) => Ok(s.clone()),
            toml::Value::Integer(n) => Ok(n.to_string()),
            toml::Value::Float(x) => Ok(x.to_string()),
            toml::Value::Boolean(b) => Ok(b.to_string()),
            other => Err(format!(
                "expected a string, a number or a boolean, found {}",
                other.type_str()
            )),
        }
    };
    let values = match value {
        toml::Value::Boolean(true) if !takes_value(arg) => Vec::new(),
        toml::Value::Boolean(false) if !takes_value(arg) => return Ok(None),
        other if !takes_value(arg) => {
            return Err(format!(
                "--{long} is a flag: expected true or false, found {}",
                other.type_str()
            ))
        }
        toml::Value::Array(items) if repeats(arg) => {
            items.iter().map(scalar).collect::<Result<_, _>>()?
        }
        toml::Value::Array(_) => return Err(format!("--{long} takes one value, not a list")),
        other => vec![scalar(other)?],
    };
    Ok(Some(Given { long, values }))
}

/// The options of `command` that a file or a variable may set: every argument with a long
/// name, except `--help`, `--version`, `--config` and `--no-config`.
fn options(command: &Command) -> impl Iterator<Item = &Arg> {
    command.get_arguments().filter(|arg| {
        arg.get_long()
            .is_some_and(|long| !matches!(long, "help" | "version" | "config" | "no-config"))
    })
}

/// The long names of [`options`].
fn longs(command: &Command) -> impl Iterator<Item = String> + '_ {
    options(command).filter_map(|arg| arg.get_long().map(str::to_owned))
}

/// The option of `command` a file key names (`id-field` or `id_field`).
fn option_of<'c>(command: &'c Command, key: &str) -> Option<&'c Arg> {
    find_long(command, &key.replace('_', "-"))
}

fn find_long<'c>(command: &'c Command, long: &str) -> Option<&'c Arg> {
    options(command).find(|arg| arg.get_long() == Some(long))
}

/// Whether `arg` takes a value (else it is a flag).
fn takes_value(arg: &Arg) -> bool {
    matches!(arg.get_action(), ArgAction::Set | ArgAction::Append)
}

/// Whether `arg` may be given more than once, each adding values.
fn repeats(arg: &Arg) -> bool {
    matches!(arg.get_action(), ArgAction::Append)
        || arg
            .get_num_args()
            .is_some_and(|range| range.max_values() > 1)
}

/// Whether the command line `rest` gives `arg` itself.
fn mentioned(rest: &[OsString], arg: &Arg) -> bool {
    let long = format!("--{}", arg.get_long().unwrap_or_default());
    let short = arg.get_short().map(|c| format!("-{c}"));
    rest.iter().take_while(|a| *a != "--").any(|a| {
        let a = a.to_string_lossy();
        a == long
            || a.starts_with(&format!("{long}="))
            || short
                .as_deref()
                .is_some_and(|s| a.starts_with(s) && !a.starts_with("--"))
    })
}

/// ", did you mean X?" for the name in `names` nearest to `key` (at most a third of its
/// characters away), or nothing.
fn nearest(key: &str, names: impl Iterator<Item = String>) -> String {
    let chars = |s: &str| s.chars().map(u32::from).collect::<Vec<u32>>();
    let key_chars = chars(&key.replace('_', "-"));
    names
        .map(|name| {
            (
                neardup_core::measure::edit_distance(&key_chars, &chars(&name)),
                name,
            )
        })
        .filter(|(distance, _)| (*distance as usize) * 3 <= key_chars.len().max(3))
        .min()
        .map(|(_, name)| format!("; did you mean {name:?}?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command() -> Command {
        let dedup = Command::new("dedup")
            .arg(Arg::new("inputs").num_args(1..))
            .arg(Arg::new("threshold").long("threshold"))
            .arg(Arg::new("id_field").long("id-field"))
            .arg(Arg::new("against").long("against").num_args(1..))
            .arg(
                Arg::new("quiet")
                    .long("quiet")
                    .short('q')
                    .action(ArgAction::SetTrue),
            )
            .arg(Arg::new("threads").long("threads"));
        let serve = Command::new("serve")
            .arg(Arg::new("data_dir").long("data-dir"))
            .arg(Arg::new("threads").long("threads"));
        Command::new("neardup").subcommand(dedup).subcommand(serve)
    }

    fn run(file: &str, vars: &[(&str, &str)], args: &[&str]) -> Result<Vec<String>, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE_NAME), file).unwrap();
        let cwd = dir.path().join("deeper");
        std::fs::create_dir(&cwd).unwrap();
        let vars: Vec<(String, OsString)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
            .collect();
        let var = |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let argv = ["neardup"].iter().chain(args).map(OsString::from).collect();
        let layered = layered(&command(), argv, &cwd, &var)?;
        Ok(layered
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect())
    }

    #[test]
    fn the_file_is_found_upwards_and_its_options_go_before_the_command_lines() {
        let file = "threads = 2\n[dedup]\nid_field = \"id\"\nthreshold = 0.5\nquiet = true\n\
                    [serve]\ndata-dir = \"/srv\"\n";
        let args = run(file, &[], &["dedup", "in.jsonl", "--threshold", "0.7"]).unwrap();
        assert_eq!(
            args,
            [
                "neardup",
                "dedup",
                "--threads=2",
                "--id-field=id",
                "--quiet",
                "--threshold=0.5",
                "in.jsonl",
                "--threshold",
                "0.7"
            ]
        );
        let args = run(file, &[], &["serve"]).unwrap();
        assert_eq!(args, ["neardup", "serve", "--threads=2", "--data-dir=/srv"]);
    }

    #[test]
    fn the_environment_goes_between_the_file_and_the_command_line() {
        let file = "[dedup]\nthreshold = 0.5\nagainst = [\"old.jsonl\", \"older.jsonl\"]\n";
        let vars = [("NEARDUP_THRESHOLD", "0.6"), ("NEARDUP_QUIET", "1")];
        let args = run(file, &vars, &["dedup", "x"]).unwrap();
        assert_eq!(
            args,
            [
                "neardup",
                "dedup",
                "--against=old.jsonl",
                "--against=older.jsonl",
                "--threshold=0.6",
                "--quiet",
                "x"
            ]
        );
        // A list is replaced by the command line's, not added to.
        let args = run(file, &[], &["dedup", "x", "--against", "new.jsonl"]).unwrap();
        assert_eq!(
            args,
            [
                "neardup",
                "dedup",
                "--threshold=0.5",
                "x",
                "--against",
                "new.jsonl"
            ]
        );
        // --no-config, --config FILE and NEARDUP_CONFIG choose the file.
        let args = run(file, &[], &["dedup", "x", "--no-config"]).unwrap();
        assert_eq!(args, ["neardup", "dedup", "x", "--no-config"]);
        let args = run(file, &[("NEARDUP_CONFIG", "")], &["dedup", "x"]).unwrap();
        assert_eq!(args, ["neardup", "dedup", "x"]);
        let device = run(file, &[], &["dedup", "--config", "/dev/null"]).unwrap_err();
        assert_eq!(device, "--config /dev/null: not a regular file");
        let missing = run(file, &[], &["dedup", "--config", "/nonexistent.toml"]).unwrap_err();
        assert_eq!(missing, "--config /nonexistent.toml: no such file");
    }

    #[test]
    fn mistakes_name_the_file_the_key_and_the_nearest_option() {
        let message = run("[dedup]\ntreshold = 0.5\n", &[], &["dedup"]).unwrap_err();
        assert!(
            message.ends_with(
                "neardup.toml: [dedup] \"treshold\" is not an option of `neardup dedup`; did \
                 you mean \"threshold\"?"
            ),
            "{message}"
        );
        for (file, command, ending) in [
            (
                "[dedupe]\nthreshold = 0.5\n",
                "serve",
                "[dedupe] is not a command; did you mean \"dedup\"?",
            ),
            ("data_dri = 1\n", "dedup", "did you mean \"data-dir\"?"),
            (
                "[dedup]\nquiet = \"yes\"\n",
                "dedup",
                "--quiet is a flag: expected true or false, found string",
            ),
            (
                "[dedup]\nthreshold = [1]\n",
                "dedup",
                "--threshold takes one value, not a list",
            ),
        ] {
            let message = run(file, &[], &[command]).unwrap_err();
            assert!(message.ends_with(ending), "{message}");
        }
        let message = run("[dedup\n", &[], &["dedup"]).unwrap_err();
        assert!(message.contains("neardup.toml: not TOML"), "{message}");
        let message = run("", &[("NEARDUP_QUIET", "maybe")], &["dedup"]).unwrap_err();
        assert_eq!(
            message,
            "NEARDUP_QUIET=maybe: --quiet is a flag: expected true or false (1 or 0)"
        );
    }

    #[test]
    fn other_first_arguments_are_left_alone() {
        assert_eq!(
            run("nonsense", &[], &["--version"]).unwrap(),
            ["neardup", "--version"]
        );
        assert_eq!(run("nonsense", &[], &[]).unwrap(), ["neardup"]);
    }
}

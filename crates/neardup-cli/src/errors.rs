//! Library messages name options as parameters (`` `max_doc_bytes` ``), so that Python and
//! HTTP users are not told about flags; the command line shows its own spelling.

/// `message` with every backticked name of an option of `command` or of its subcommands
/// written as its flag: `` `max_doc_bytes` `` becomes `--max-doc-bytes` (a hint may name an
/// option of another subcommand: `eval` tells to read the documents with `dedup
/// --id-field`). Other backticked words stay as they are.
pub fn with_flags(message: &str, command: &clap::Command) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(open) = rest.find('`') {
        let Some(length) = rest[open + 1..].find('`') else {
            break;
        };
        let name = &rest[open + 1..open + 1 + length];
        out.push_str(&rest[..open]);
        match flag_of(name, command) {
            Some(flag) => out.push_str(&flag),
            None => out.push_str(&rest[open..open + length + 2]),
        }
        rest = &rest[open + length + 2..];
    }
    out.push_str(rest);
    out
}

fn flag_of(name: &str, command: &clap::Command) -> Option<String> {
    let commands = std::iter::once(command).chain(command.get_subcommands());
    let mut args = commands.flat_map(clap::Command::get_arguments);
    let arg = args.find(|arg| arg.get_id() == name)?;
    Some(format!("--{}", arg.get_long()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_become_flags_and_other_names_stay() {
        let command = clap::Command::new("x")
            .arg(clap::Arg::new("max_doc_bytes").long("max-doc-bytes"))
            .arg(clap::Arg::new("inputs"))
            .subcommand(clap::Command::new("y").arg(clap::Arg::new("id_field").long("id-field")));
        assert_eq!(
            with_flags(
                "record exceeds `max_doc_bytes` 10; `sketch` `inputs` `",
                &command
            ),
            "record exceeds --max-doc-bytes 10; `sketch` `inputs` `"
        );
        assert_eq!(with_flags("(`id_field`)", &command), "(--id-field)");
    }
}

//! `neardup completions SHELL` and `neardup man`: what a shell and `man` need, generated
//! from the command line's own definition, so that they never lag behind it.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Command};
use clap_complete::Shell;

#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, powershell or elvish.
    shell: Shell,
}

#[derive(Args)]
pub struct ManArgs {
    /// The command whose page to print (`dedup`, `serve`, ...); none: the page of `neardup`.
    command: Option<String>,
    /// Write every page (`neardup.1`, `neardup-dedup.1`, ...) into this folder instead.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    dir: Option<PathBuf>,
}

/// Prints the completion script of `shell` for `command`.
///
/// - bash: `source <(neardup completions bash)`, or save it as
///   `~/.local/share/bash-completion/completions/neardup`;
/// - zsh: save it as `_neardup` in a folder of `$fpath`;
/// - fish: save it as `~/.config/fish/completions/neardup.fish`.
pub fn completions(args: &CompletionsArgs, mut command: Command) -> Result<()> {
    let mut out = std::io::stdout().lock();
    clap_complete::generate(args.shell, &mut command, "neardup", &mut out);
    out.flush().context("standard output")?;
    Ok(())
}

/// Prints a man page (roff), or writes them all into a folder.
pub fn man(args: &ManArgs, command: Command) -> Result<()> {
    let mut command = command.name("neardup");
    if let Some(dir) = &args.dir {
        std::fs::create_dir_all(dir).with_context(|| format!("--dir {}", dir.display()))?;
        clap_mangen::generate_to(command, dir)
            .with_context(|| format!("--dir {}: cannot write the pages", dir.display()))?;
        return Ok(());
    }
    let page = match &args.command {
        None => command,
        Some(name) => {
            command.build();
            let command = command;
            let names: Vec<String> = command
                .get_subcommands()
                .map(|c| c.get_name().to_owned())
                .collect();
            let Some(sub) = command.find_subcommand(name) else {
                bail!(
                    "{name:?} is not a command; the commands are {}",
                    names.join(", ")
                );
            };
            // Named `neardup-dedup(1)`, as `--dir` names its file, and shown as `neardup
            // dedup` in its synopsis.
            sub.clone()
                .name(format!("neardup-{}", sub.get_name()))
                .bin_name(format!("neardup {}", sub.get_name()))
        }
    };
    let mut out = std::io::stdout().lock();
    clap_mangen::Man::new(page)
        .render(&mut out)
        .context("standard output")?;
    out.flush().context("standard output")?;
    Ok(())
}

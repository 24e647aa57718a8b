"""Custom commands: where the files are found, which one wins, and how a template expands."""

from __future__ import annotations

from pathlib import Path

from di_code.config.custom_commands import CustomCommand, load_commands
from tests.support.files import write


def command(template: str) -> CustomCommand:
    return CustomCommand("t", Path("t.md"), "", "", template, Path("/workspace"))


def test_arguments_and_positions_are_filled() -> None:
    template = "Fix issue $1 in $2 ($ARGUMENTS); $3 is empty; $ARGUMENTS again"
    assert command(template).expand(' 42  "src/a b.py" ') == (
        'Fix issue 42 in src/a b.py (42  "src/a b.py");  is empty; 42  "src/a b.py" again'
    )


def test_filled_text_is_not_expanded_again() -> None:
    assert command("say $1").expand("$2 $ARGUMENTS") == "say $2"


def test_a_template_without_placeholders_gets_the_arguments_appended() -> None:
    assert command("Review the diff.\n").expand("focus on tests") == (
        "Review the diff.\n\nfocus on tests"
    )
    assert command("Review the diff.").expand("") == "Review the diff."


def test_an_unclosed_quote_falls_back_to_plain_words() -> None:
    assert command("$1|$2").expand('"a b') == '"a|b'


def test_files_are_found_nearest_first(tmp_path: Path, di_code_home: Path, user_home: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    workspace = repo / "pkg"
    write(workspace / ".di-code/commands/review.md", "nearest review")
    write(repo / ".claude/commands/review.md", "root review")
    write(repo / ".claude/commands/deploy.md", "---\ndescription: Ship it\n---\ndeploy $1")
    write(di_code_home / "commands/deploy.md", "home deploy")
    write(di_code_home / "commands/notes.md", "# Take notes\n\nwrite $ARGUMENTS down")
    write(user_home / ".claude/commands/old.md", "from claude")
    write(tmp_path / ".di-code/commands/above.md", "above the repository: never read")
    write(workspace / ".di-code/commands/not a name.md", "skipped")
    found = load_commands(di_code_home, workspace)
    assert sorted(found.commands) == ["deploy", "notes", "old", "review"]
    assert found.commands["review"].template == "nearest review"
    assert found.commands["deploy"].template == "deploy $1"
    assert found.commands["deploy"].description == "Ship it"
    assert found.commands["notes"].description == "Take notes"  # the first line without one
    assert found.warnings == ()


def test_expand_prompt_names_a_command_or_leaves_the_text(
    tmp_path: Path, di_code_home: Path, user_home: Path
) -> None:
    write(di_code_home / "commands/fix.md", "Fix $ARGUMENTS")
    found = load_commands(di_code_home, tmp_path)
    assert found.expand_prompt("/fix the bug") == "Fix the bug"
    assert found.expand_prompt("/fix\n\n<stdin>x</stdin>") == "Fix <stdin>x</stdin>"
    assert found.expand_prompt("/etc/passwd explain") is None
    assert found.expand_prompt("fix it") is None


def test_a_built_in_wins_and_bad_front_matter_warns(
    tmp_path: Path, di_code_home: Path, user_home: Path
) -> None:
    help_file = write(tmp_path / ".di-code/commands/help.md", "my help")
    bad = write(tmp_path / ".di-code/commands/bad.md", "---\ndescription: 'open\n---\nbody")
    write(tmp_path / ".di-code/commands/good.md", "---\nargument-hint: <file>\n---\ngood $1")
    found = load_commands(di_code_home, tmp_path, reserved=["/help", "/exit"])
    assert list(found.commands) == ["good"]
    assert found.commands["good"].argument_hint == "<file>"
    assert found.warnings == (
        f"{bad}: skipped: bad front matter: line 2: the quoted value has no closing '",
        f"{help_file}: the built-in /help wins over this command file",
    )

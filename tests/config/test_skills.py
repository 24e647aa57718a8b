"""Skills: found in the shared folders, listed in the system prompt by name, description and
path, never by body; a SKILL.md that cannot be read is a warning naming it."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

from di_code.config.skills import load_skills, skills_prompt
from di_code.config.system_prompt import build_system_prompt
from di_code.system.names import unescaped_path


def skill(folder: Path, front: str, body: str = "SECRET BODY STEPS") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\n{front}\n---\n{body}\n", encoding="utf-8")
    return path


def test_skills_are_found_nearest_first(
    tmp_path: Path, di_code_home: Path, user_home: Path
) -> None:
    workspace = tmp_path / "ws"
    pdf = skill(workspace / ".agents/skills/pdf", "name: pdf\ndescription: Work with PDF files")
    skill(user_home / ".claude/skills/pdf", "name: pdf\ndescription: the user's older pdf")
    mine = skill(di_code_home / "skills/notes", "name: notes\ndescription: >\n  Keep\n  notes")
    claude = skill(workspace / ".claude/skills/db", "name: db\ndescription: 'Query the db'")
    (workspace / ".di-code/skills/empty").mkdir(parents=True)  # no SKILL.md: not a skill
    found = load_skills(di_code_home, workspace)
    assert [(s.name, s.description, s.path) for s in found.skills] == [
        ("pdf", "Work with PDF files", pdf),
        ("db", "Query the db", claude),
        ("notes", "Keep notes", mine),
    ]
    assert found.warnings == (
        f"{user_home / '.claude/skills/pdf/SKILL.md'}: skipped: skill pdf is already defined",
    )


def test_bad_front_matter_is_a_warning_naming_the_file(
    tmp_path: Path, di_code_home: Path, user_home: Path
) -> None:
    broken = skill(tmp_path / ".di-code/skills/a", "name: a\ndescription: 'unclosed")
    nameless = skill(tmp_path / ".di-code/skills/b", "description: no name here")
    plain = tmp_path / ".di-code/skills/c/SKILL.md"
    plain.parent.mkdir()
    plain.write_text("no front matter at all\n")
    good = skill(tmp_path / ".di-code/skills/d", "name: d\ndescription: fine")
    found = load_skills(di_code_home, tmp_path)
    assert [s.path for s in found.skills] == [good]
    assert found.warnings == (
        f"{broken}: skipped: bad front matter: line 3: the quoted value has no closing '",
        f"{nameless}: skipped: bad front matter: no name",
        f"{plain}: skipped: bad front matter: no name and no description",
    )


def test_the_system_prompt_lists_the_skill_but_not_its_body(
    tmp_path: Path, di_code_home: Path, user_home: Path
) -> None:
    path = skill(tmp_path / ".di-code/skills/pdf", "name: pdf\ndescription: Fill <PDF> forms")
    skills = load_skills(di_code_home, tmp_path).skills
    prompt = build_system_prompt(
        tool_names=["read", "bash"],
        workspace=tmp_path,
        home=di_code_home,
        today=date(2026, 1, 2),
        skills=skills,
    )
    assert "<name>pdf</name>" in prompt
    assert "<description>Fill &lt;PDF&gt; forms</description>" in prompt
    assert f"<location>{path}</location>" in prompt
    assert "read its SKILL.md with the read tool" in prompt
    assert "SECRET BODY STEPS" not in prompt
    without_read = build_system_prompt(
        tool_names=["bash"],
        workspace=tmp_path,
        home=di_code_home,
        today=date(2026, 1, 2),
        skills=skills,
    )
    assert "pdf" not in without_read


def test_a_skill_in_a_folder_whose_name_is_not_utf8_is_listed_where_read_finds_it(
    tmp_path: Path, di_code_home: Path, user_home: Path
) -> None:
    """The location is written as the file tools write names (`caf\\xe9`), which read takes
    back; the name as Python holds it cannot be encoded, and U+FFFD names no file."""
    workspace = tmp_path / "ws"
    folder = Path(os.fsdecode(bytes(workspace / ".agents/skills") + b"/caf\xe9\nx"))
    path = skill(folder, "name: cafe\ndescription: Coffee")
    section = skills_prompt(load_skills(di_code_home, workspace).skills)
    # compared as booleans: a report holding the name would not pass between test workers
    sendable = section.encode("utf-8", "replace").decode("utf-8") == section
    assert sendable, "the prompt holds a name that cannot be encoded"
    location = section.split("<location>")[1].split("</location>")[0]
    assert "\n" not in location
    assert os.fsencode(unescaped_path(location)) == os.fsencode(path)

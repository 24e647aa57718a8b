"""Skills in the Agent Skills format: a folder holding `SKILL.md`, whose front matter gives the
skill's `name` and `description`.

They are found in `.di-code/skills/`, `.agents/skills/` and `.claude/skills/` of every folder
from the workspace up to the repository root, then in `$DI_CODE_HOME/skills/`,
`~/.agents/skills/` and `~/.claude/skills/`; the first skill of a name wins. The system prompt
lists only each skill's name, description and the path of its SKILL.md, so a skill costs a few
tokens until the model decides to read it. A skill is text, like a command template, so an
untrusted project's skills are listed too; what the model then does is gated as always.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec

from di_code.config.front_matter import (
    NAME_CAP,
    Document,
    FrontMatterError,
    markdown_files,
    project_of,
    read_or_warn,
    search_folders,
    short_description,
    shown,
)
from di_code.system.names import escape_name

SKILL_FILE = "SKILL.md"
SKILL_FOLDERS = tuple(Path(folder) / "skills" for folder in (".di-code", ".agents", ".claude"))
HEAD_CAP = 64 * 1024
"""How much of a SKILL.md is read to find its front matter."""


class Skill(msgspec.Struct, frozen=True):
    name: str
    description: str
    path: Path
    """The SKILL.md file."""

    @property
    def folder(self) -> Path:
        return self.path.parent


class SkillSet(msgspec.Struct, frozen=True):
    skills: tuple[Skill, ...]
    warnings: tuple[str, ...] = ()


def load_skills(home: Path, workspace: Path) -> SkillSet:
    """Every skill, nearest first; a SKILL.md that cannot be used is one warning line."""
    skills: dict[str, Skill] = {}
    warnings: list[str] = []
    project = project_of(workspace)
    for path in markdown_files(skill_folders(home, workspace), inside=SKILL_FILE):
        skill = read_or_warn(path, HEAD_CAP, _skill, warnings, project)
        if skill is None:
            continue
        if skill.name in skills:
            warnings.append(f"{shown(path)}: skipped: skill {skill.name} is already defined")
            continue
        skills[skill.name] = skill
    return SkillSet(tuple(skills.values()), tuple(warnings))


def skill_folders(home: Path, workspace: Path) -> list[Path]:
    """Where skills are looked for, nearest first."""
    user = [home / "skills", Path.home() / ".agents" / "skills", Path.home() / ".claude" / "skills"]
    return search_folders(workspace, SKILL_FOLDERS, user)


def skills_prompt(skills: Sequence[Skill]) -> str:
    """The system prompt's section: what each skill is for and where its file is, no body."""
    entries = "\n".join(
        f"<skill>\n<name>{escape(s.name)}</name>\n<description>{escape(s.description)}"
        f"</description>\n<location>{escape(escape_name(str(s.path)))}</location>\n</skill>"
        for s in skills
    )
    return (
        "Skills: instructions for particular tasks, kept in files. When a task matches a "
        "skill's description, first read its SKILL.md with the read tool and follow it; paths "
        "in a skill are relative to its folder.\n"
        f"<available_skills>\n{entries}\n</available_skills>"
    )


def escape(text: str) -> str:
    """Text safe inside the prompt's XML-like tags (xml.sax costs a few ms to import)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _skill(path: Path, document: Document) -> Skill:
    fields = document.fields
    missing = [key for key in ("name", "description") if not fields.get(key, "").strip()]
    if missing:
        raise FrontMatterError(f"no {' and no '.join(missing)}")
    name = " ".join(fields["name"].split())
    if len(name) > NAME_CAP:
        raise FrontMatterError(f"the name is longer than {NAME_CAP} characters")
    return Skill(name, short_description(fields["description"]), path)

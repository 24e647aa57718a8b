"""For any base tree and any change a task makes (binary files, CRLF, no trailing newline,
modes, deletions, new files, symlinks, under any .gitattributes), the task's patch applied with
`git apply` to a clean checkout of its base gives exactly the task's tree."""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from di_code.batch.checkout import make_checkout, patch_of, remove_checkout
from tests.support.raw_repo import RawTree, commit_raw, raw_git, read_tree

NAMES = ["a.txt", "b.bin", "c", "dir/d.txt", "dir/sub/e.png", "f.crlf", "g.id"]
ATTRIBUTE_LINES = [
    "* text=auto",
    "*.txt text eol=crlf",
    "*.crlf text eol=crlf",
    "*.id ident",
    "*.png diff=png -text",
    "* filter=lfs",
    "*.bin binary",
    "dir/** working-tree-encoding=UTF-16",
]
LINE_ENDS = st.sampled_from([b"\n", b"\r\n", b"\r", b""])
TEXT = st.lists(
    st.tuples(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), LINE_ENDS),
    max_size=5,
).map(lambda lines: b"".join(body + end for body, end in lines))
CONTENT = st.one_of(TEXT, st.binary(max_size=300), st.just(b"$Id$\n"))
FILE = st.tuples(CONTENT, st.booleans())
TREE = st.dictionaries(st.sampled_from(NAMES), FILE, max_size=len(NAMES))
ATTRIBUTES = st.lists(st.sampled_from(ATTRIBUTE_LINES), max_size=3).map(
    lambda lines: "".join(line + "\n" for line in lines).encode()
)
LINK = st.sampled_from([None, "a.txt", "../outside", "dir"])
_count = itertools.count()


def with_attributes(tree: RawTree, attributes: bytes) -> RawTree:
    return {**tree, ".gitattributes": (attributes, False)} if attributes else tree


def apply_change(folder: Path, before: RawTree, after: RawTree, link: str | None) -> None:
    for path in before.keys() - after.keys():
        (folder / path).unlink()
    for path, (content, executable) in after.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        target.chmod(0o755 if executable else 0o644)
    if link is not None:
        (folder / "link").symlink_to(link)


@settings(max_examples=12)
@given(base=TREE, task=TREE, attributes=ATTRIBUTES, new_attributes=ATTRIBUTES, link=LINK)
def test_the_patch_applied_to_the_base_gives_the_task_tree(
    base: RawTree, task: RawTree, attributes: bytes, new_attributes: bytes, link: str | None
) -> None:
    work = Path(tempfile.mkdtemp(prefix="di-code-patch-"))
    try:
        before = with_attributes(base, attributes)
        after = with_attributes(task, new_attributes)
        commit_raw(work / "repo", before)
        number = next(_count)
        checkout = make_checkout(str(work / "repo"), None, work / "c" / f"t{number}", "t")
        assert read_tree(checkout.path) == before
        apply_change(checkout.path, before, after, link)
        expected = read_tree(checkout.path)
        patch = patch_of(checkout).data
        remove_checkout(checkout)
        clean = make_checkout(str(work / "repo"), None, work / "c" / f"u{number}", "u")
        if patch:
            raw_git(clean.path, "apply", stdin=patch)
        assert read_tree(clean.path) == expected
        remove_checkout(clean)
    finally:
        shutil.rmtree(work, ignore_errors=True)


HOSTILE_NAMES = [
    "k",
    "k\r",
    "new\nline",
    "tab\there",
    "-rf",
    "--force",
    " lead",
    "trail ",
    "bad\udcffutf8",  # the byte 0xff: not UTF-8
    "caf\u00e9",  # NFC
    "cafe\u0301",  # NFD: its normalisation twin
    "dir/x\r",
    "dir/ y ",
]
LINK_NAMES = ["lk", "lk\r", "-link", "link\n"]
SECRET = b"the secret outside the checkout\n"
LINK_TARGETS = ["outside", "ABSOLUTE", "k", "dir", "dir/x\r", "missing"]
"""`outside` is the secret's path relative to the checkout, ABSOLUTE its absolute path."""
HOSTILE_TREE = st.dictionaries(st.sampled_from(HOSTILE_NAMES), FILE, max_size=6)
LINKS = st.dictionaries(st.sampled_from(LINK_NAMES), st.sampled_from(LINK_TARGETS), max_size=3)


def make_links(folder: Path, secret: Path, links: dict[str, str], replace_dir: bool) -> None:
    targets = {"outside": os.path.relpath(secret, folder), "ABSOLUTE": str(secret)}
    for name, target in links.items():
        (folder / name).symlink_to(targets.get(target, target))
    if replace_dir and (folder / "dir").is_dir():  # a tracked folder becomes a link out
        shutil.rmtree(folder / "dir")
        (folder / "dir").symlink_to(secret.parent)


def plain_folder(folder: Path, files: RawTree) -> None:
    """A folder outside git holding `files` (a batch copies it, hashed as it is)."""
    folder.mkdir()
    apply_change(folder, {}, files, None)


@settings(max_examples=15)
@given(
    base=HOSTILE_TREE,
    task=HOSTILE_TREE,
    links=LINKS,
    replace_dir=st.booleans(),
    in_git=st.booleans(),
)
def test_hostile_names_and_links_round_trip_and_nothing_outside_is_read(
    base: RawTree, task: RawTree, links: dict[str, str], replace_dir: bool, in_git: bool
) -> None:
    """Names with newlines, CR, tabs, a leading `-`, spaces at the ends, bytes that are not
    UTF-8 and normalisation twins, and links in and out, in a repository or a plain folder: the
    patch gives the task's tree byte for byte (a link as a link), and no byte from outside the
    checkout is in it."""
    work = Path(tempfile.mkdtemp(prefix="di-code-patch-"))
    try:
        secret = work / "outside" / "secret"
        secret.parent.mkdir()
        secret.write_bytes(SECRET)
        (commit_raw if in_git else plain_folder)(work / "repo", base)
        checkout = make_checkout(str(work / "repo"), None, work / "c" / "t", "t")
        assert read_tree(checkout.path) == base
        apply_change(checkout.path, base, task, None)
        make_links(checkout.path, secret, links, replace_dir)
        expected = read_tree(checkout.path)
        patch = patch_of(checkout).data
        assert SECRET.strip() not in patch
        clean = make_checkout(str(work / "repo"), None, work / "c" / "u", "u")
        if patch:
            raw_git(clean.path, "apply", stdin=patch)
        assert read_tree(clean.path) == expected
    finally:
        shutil.rmtree(work, ignore_errors=True)

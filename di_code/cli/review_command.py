"""`di-code review`: the model reviews the uncommitted changes, a branch against a base, or one
commit, in read-only mode (it is offered only the reading tools, and the gate refuses any
other call), and `--output-format json` hands CI the findings as a list.

The diff is read before the model is set up (a wrong `--base` is exit 2 without a request);
the rest is `run`'s path (di_code.cli.run), with review's own end: the answer as text, or the
findings parsed (di_code.setup.review) into `run`'s result object.
"""

from __future__ import annotations

import sys
from pathlib import Path

from di_code.ai.types import AssistantMessage
from di_code.cli.output import RunTally, Writer, json_text, notify_stderr, result_object
from di_code.cli.prompt_input import UsageError
from di_code.cli.run import EXIT_ERROR, EXIT_OK, Finish, run_prompt
from di_code.session.review_diff import ReviewDiff, ReviewError, ReviewTarget, read_diff
from di_code.setup.flags import CliOptions
from di_code.setup.review import ReviewFormatError, read_findings, review_prompt

REVIEW_FORMATS = ("text", "json")


def review_target(base: str | None, commit: str | None) -> ReviewTarget:
    if base is not None and commit is not None:
        raise UsageError("give --base or --commit, not both")
    if base is not None:
        return ReviewTarget("base", base)
    if commit is not None:
        return ReviewTarget("commit", commit)
    return ReviewTarget()


def review_command(
    base: str | None, commit: str | None, output_format: str, options: CliOptions
) -> int:
    if output_format not in REVIEW_FORMATS:
        raise UsageError(f"--output-format must be one of {', '.join(REVIEW_FORMATS)}")
    try:
        diff = read_diff(Path.cwd(), review_target(base, commit))
    except ReviewError as exc:
        raise UsageError(str(exc)) from None
    out = Writer(sys.stdout)
    if diff.empty:
        notify_stderr(f"nothing to review: {diff.target.nothing()}")
        if output_format == "json":
            out.line(json_text(_empty_result(diff)))
        return EXIT_OK
    if diff.left_out:
        notify_stderr(diff.left_out)
    reading = options._replace(permission_mode="read-only", yes=False)
    if output_format == "json":
        return run_prompt(review_prompt(diff), "json", reading, _findings_printer(diff))
    return run_prompt(review_prompt(diff), "text", reading)


def _findings_printer(diff: ReviewDiff) -> Finish:
    """The json end: `run`'s result object with `findings` and `verdict` read from the
    answer; an answer out of the format is an error (one line, exit 1)."""

    def finish(
        final: AssistantMessage, tally: RunTally, session_id: str | None, out: Writer
    ) -> int:
        result = result_object(final, tally, session_id)
        result.update(type="review", target=diff.target.describe(), left_out=diff.left_out)
        result.update(findings=[], verdict=None)
        if result["is_error"]:
            notify_stderr(str(result["result"] or final.stop_reason).splitlines()[0])
            out.line(json_text(result))
            return EXIT_ERROR
        try:
            report = read_findings(final.text)
        except ReviewFormatError as exc:
            notify_stderr(str(exc))
            result.update(is_error=True, error=str(exc))
            out.line(json_text(result))
            return EXIT_ERROR
        findings = [
            {"path": f.path, "line": f.line, "severity": f.severity, "why": f.why}
            for f in report.findings
        ]
        result.update(findings=findings, verdict=report.verdict)
        out.line(json_text(result))
        return EXIT_OK

    return finish


def _empty_result(diff: ReviewDiff) -> dict[str, object]:
    return {
        "type": "review",
        "is_error": False,
        "target": diff.target.describe(),
        "findings": [],
        "verdict": "nothing to review",
    }

"""Sessions that survive crashes, and compaction.

Typical use by the CLI / REPL::

    store = SessionStore(home)                     # home = $DI_CODE_HOME (default ~/.di-code)
    session = store.create(cwd)                    # new; the file appears with the first entry
    session = store.latest(cwd)                    # --continue (None when there is none)
    session = store.find("3fa9", cwd)              # --session ID or unambiguous id prefix
    store.list(cwd, limit=20)                      # /resume: SessionSummary(id, path,
                                                   #   first_prompt, modified, size, message_count)
    for warning in session.warnings: ...           # torn/corrupt lines skipped while loading
    agent = Agent(provider, model, tools, messages=session.context())
    stop = session.record(agent, on_error=notify)  # appends each message at message_end;
                                                   #   a failed write goes to on_error
    final = await prompt_with_compaction(agent, text, session, signal=signal,
                                         on_compaction=show)   # session may be None
    await compact_agent(agent, session, instructions="focus on the parser")   # /compact
    session.id, session.path, session.model()      # (provider, model_id) last used, or None

Errors are one line each: `SessionError` (not found, ambiguous prefix, newer format version,
unreadable file, write failure) and `CompactionError` / `NothingToCompact` ("Nothing to
compact"). `is_context_overflow(message)` lives in `di_code.ai.overflow`.
Files: `<home>/sessions/<workspace-slug>/<time>_<id>.jsonl`; format in `format.py`.
`make_session_file` (scripts/synthetic_session.py) writes a large session for benchmarks.

The public names are the imports below, loaded from their modules when first used
(di_code.system.lazy_exports): a run without a session (`--no-session`) then loads only
compaction, not the store, the format or the checkpoints.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from di_code.session.auto import compact_agent, prompt_with_compaction
    from di_code.session.compaction import (
        DEFAULT_KEEP_RECENT_TOKENS,
        DEFAULT_RESERVE,
        NOTHING_TO_COMPACT,
        CompactionError,
        CompactionResult,
        NothingToCompact,
        compact,
        context_tokens,
        estimate_tokens,
        should_compact,
    )
    from di_code.session.format import (
        FORMAT_VERSION,
        CompactionEntry,
        Entry,
        MessageEntry,
        ModelChangeEntry,
        SessionError,
        SessionHeader,
    )
    from di_code.session.session import Session
    from di_code.session.store import SessionStore, SessionSummary, workspace_slug
else:  # hidden from type checkers, so a misspelt name is still an error
    from di_code.system.lazy_exports import lazy_exports

    __getattr__, __dir__ = lazy_exports(__name__, __file__)

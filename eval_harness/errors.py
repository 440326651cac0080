"""One error tree. The CLI boundary maps each class to an exit code (see DESIGN.md).

Exit codes: 0 success; 1 a threshold or regression gate failed; 2 usage or configuration
error (nothing was run); 3 aborted on a quota/auth failure or the spend cap; 4 nothing usable was produced
(every cell errored, or a judge errored on every sample); 70 internal error (a bug; sysexits
EX_SOFTWARE); 130 interrupted (Ctrl-C); 143 terminated (SIGTERM). Finished work is kept in
every case.
"""

from __future__ import annotations


class EvalHarnessError(Exception):
    """Root of every error this tool raises on purpose."""

    exit_code: int = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        """The single line printed to the user."""
        text = self.message.replace("\n", " ")
        if self.hint:
            text += f" (hint: {self.hint})"
        return text


class UsageError(EvalHarnessError):
    """Bad command-line usage; nothing was run."""

    exit_code = 2


class ConfigError(UsageError):
    """A malformed eval.yaml (or a file it names). Carries the file, key path and line."""

    def __init__(
        self,
        message: str,
        *,
        path: str = "",
        file: str | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.key_path = path
        self.file = file
        self.line = line
        self.detail = message  # the message without its file/line/key-path prefix
        where = ""
        if file:
            where = file + (f":{line}" if line else "")
        prefix = ": ".join(p for p in (where, path) if p)
        super().__init__(f"{prefix}: {message}" if prefix else message, hint=hint)


class DatasetError(ConfigError):
    """A malformed dataset (bad case id, duplicate, path escape, unreadable case)."""


class JudgeCheckError(UsageError):
    """A judge model failed its pre-flight check call; nothing was run."""


class AgentCannotStart(UsageError):
    """The agent's program could not be started, the same way, in every cell tried so far:
    the run stops at once (exit 2) instead of attempting every cell."""


class QuotaExhausted(EvalHarnessError):
    """Quota exhausted or authentication failed repeatedly: stop launching, exit 3."""

    exit_code = 3


class BudgetExhausted(QuotaExhausted):
    """The spend cap (``--max-spend``) stopped launching cells; finished work is kept, a
    rerun resumes (exit 3, like a provider's quota: same state, same remedy)."""


class AnalysisError(EvalHarnessError):
    """Analysis could not proceed (e.g. no usable runs)."""

    exit_code = 2


class NoUsableResults(EvalHarnessError):
    """The run produced nothing to analyse: every cell errored, or a judge errored on every
    sample (reports are still written, saying so)."""

    exit_code = 4


class Terminated(KeyboardInterrupt):
    """SIGTERM (CI cancel, ``timeout``, Kubernetes): handled exactly like Ctrl-C, exit 143."""


#: exit code of an unexpected exception (a bug), distinct from 1 (a gate failed)
INTERNAL_ERROR_EXIT = 70
#: exit code after Ctrl-C / SIGTERM
INTERRUPTED_EXIT = 130
TERMINATED_EXIT = 143

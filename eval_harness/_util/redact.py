"""Secret values, registered once, masked in everything written or printed.

What counts as a secret (docs/security.md):

- the value of every environment variable whose *name* ends like a credential
  (``..._API_KEY``, ``..._KEY``, ``..._TOKEN``, ``..._SECRET``, ``..._PASSWORD``,
  ``..._CREDENTIALS``), OPENAI_API_KEY and ANTHROPIC_API_KEY included;
- the value of every ``${VAR}`` the config references under a secret-looking key
  (``api_key``, ``Authorization``, an ``env`` entry named like a credential);
- a literal value written in the config under such a key.

Every value is registered in several *forms*: as given, stripped of surrounding
whitespace (a key read with ``$(cat key.txt)`` keeps its newline), and JSON-, HTML- and
URL-escaped, so a masked file holds none of them. Values shorter than
:data:`MIN_SECRET_CHARS` are ignored (masking ``"1"`` everywhere would wreck reports).

Masking points: every JSON file of a run directory (``_util.atomic_files.dumps``), the agent's
``stdout.log`` / ``stderr.log`` once the process ends, the ``--verbose`` tee, every report and
analysis file, and ``sys.stdout`` / ``sys.stderr`` for the whole CLI call (so rich output,
logging, warnings and ``--debug`` tracebacks pass through it).
"""

from __future__ import annotations

import html
import itertools
import json
import os
import re
import threading
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

MASK = "***"
MIN_SECRET_CHARS = 6
_SECRET_ENV_NAME = re.compile(
    r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH)$", re.I)
_SECRET_KEY = re.compile(r"(key|token|secret|password|passwd|authorization|credential)", re.I)
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}")
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_SECRET_WORDS = {"password", "passwd", "passphrase", "secret", "token", "authorization",
                 "auth", "cookie", "credential", "credentials", "apikey", "bearer"}
_SECRET_PAIRS = {("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"),
                 ("session", "key"), ("client", "secret")}


def secret_key_name(key: str) -> bool:
    """True when a mapping key names a credential, word by word (snake, kebab or camel
    case): a word is ``password``, ``token``, ``secret``, ``authorization``, ``cookie``... or
    two adjacent words are ``api key``, ``access key``, ``private key``... (``max_tokens``,
    ``keyword`` or ``monkey`` are not). Stricter than the masking rule above, which masks
    any key containing ``key``: used where a false alarm costs (traces, warnings)."""
    words = [w.lower() for w in _WORDS.findall(key)]
    if any(w in _SECRET_WORDS for w in words):
        return True
    return any(pair in _SECRET_PAIRS for pair in itertools.pairwise(words))

_lock = threading.Lock()
_forms: tuple[str, ...] = ()  # longest first, so a longer form is masked before its core
_pattern: re.Pattern[str] | None = None


def forms_of(value: str) -> set[str]:
    """Every form of ``value`` that may end up in a file or on a terminal."""
    out: set[str] = set()
    for v in {value, value.strip()}:
        out |= {v, json.dumps(v)[1:-1], json.dumps(v, ensure_ascii=False)[1:-1],
                html.escape(v), urllib.parse.quote(v, safe=""), repr(v)[1:-1]}
    return {f for f in out if len(f.strip()) >= MIN_SECRET_CHARS}


def register(values: Iterable[str]) -> None:
    """Add secret values (all their forms) to the mask."""
    global _forms, _pattern
    new = set()
    for v in values:
        if isinstance(v, str) and len(v.strip()) >= MIN_SECRET_CHARS:
            new |= forms_of(v)
    with _lock:
        merged = set(_forms) | new
        if merged == set(_forms):
            return
        _forms = tuple(sorted(merged, key=lambda f: (-len(f), f)))
        _pattern = re.compile("|".join(re.escape(f) for f in _forms))


def clear() -> None:
    """Forget every registered secret (tests)."""
    global _forms, _pattern
    with _lock:
        _forms, _pattern = (), None


#: ``scheme://user:password@`` (the password masked) or ``scheme://token@`` (all masked)
_URL_USERINFO = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]{0,30}://)(?P<user>[^\s/?#@:'\"<>]*)"
    r"(?P<password>:[^\s/?#@'\"<>]*)?@(?=[^\s/?#@'\"<>])")
#: a query parameter named like a credential (``?api_key=…``, ``&token=…``, ``&sig=…``)
_URL_SECRET_PARAM = re.compile(
    r"(?P<name>[?&][^=&\s#'\"<>]*?(?:key|token|secret|password|passwd|sig|signature|auth)"
    r"[^=&\s#'\"<>]*=)(?P<value>[^&\s#'\"<>]+)", re.IGNORECASE)


def _userinfo(m: re.Match[str]) -> str:
    if m.group("password") is not None:
        return f"{m.group('scheme')}{m.group('user')}:{MASK}@"
    return f"{m.group('scheme')}{MASK}@"


def mask_url_credentials(text: str) -> str:
    """``text`` with the credentials of every URL in it masked: the password of
    ``scheme://user:password@host`` (a lone ``scheme://token@host`` entirely) and the value
    of credential-named query parameters. The one function for URLs we print or keep
    (``MLFLOW_TRACKING_URI``, a database URL, a base URL): :func:`redact` applies it, so
    every stream and log the secret mask covers is covered."""
    if "://" not in text and "=" not in text:
        return text
    return _URL_SECRET_PARAM.sub(lambda m: m.group("name") + MASK,
                                 _URL_USERINFO.sub(_userinfo, text))


def redact(text: str) -> str:
    """``text`` with every registered form replaced by ``***`` and URL credentials
    masked (:func:`mask_url_credentials`)."""
    if not text:
        return text
    pattern = _pattern
    text = mask_url_credentials(text)
    return text if pattern is None else pattern.sub(MASK, text)


def redact_bytes(data: bytes) -> bytes:
    """:func:`redact` for UTF-8 bytes (undecodable bytes are kept as they are)."""
    if not data:
        return data
    return redact(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


def redact_file(path: str | os.PathLike[str], limit: int = 64 * 1024 * 1024) -> None:
    """Rewrite a (log) file in place when it holds a secret; files past ``limit`` bytes are
    only scanned in their first ``limit`` bytes (logs are capped well below that)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit)
    except OSError:
        return
    masked = redact_bytes(data)
    if masked != data:
        with open(path, "r+b") as fh:
            fh.write(masked)
            fh.truncate()


def env_secrets(env: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables named like credentials."""
    env = os.environ if env is None else env
    return [v for k, v in env.items() if _SECRET_ENV_NAME.search(k)]


def config_secrets(raw: Any, env: Mapping[str, str] | None = None, key: str = "") -> list[str]:
    """Secret values a raw (uninterpolated) config names: ``${VAR}`` and literals under
    secret-looking keys, and ``${VAR}`` whose name looks like a credential anywhere."""
    env = os.environ if env is None else env
    out: list[str] = []
    if isinstance(raw, Mapping):
        for k, v in raw.items():
            out += config_secrets(v, env, str(k))
    elif isinstance(raw, list):
        for v in raw:
            out += config_secrets(v, env, key)
    elif isinstance(raw, str):
        secret_key = bool(key and _SECRET_KEY.search(key))
        names = _VAR.findall(raw)
        out += [env[n] for n in names
                if n in env and (secret_key or _SECRET_ENV_NAME.search(n))]
        if secret_key and not names:
            out.append(raw)
    return out


class RedactingStream:
    """A text stream wrapper masking secrets in everything written through it."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        """Write ``text`` masked."""
        self._inner.write(redact(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

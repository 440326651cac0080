"""The ``cache`` and ``pricing`` blocks (docs/cost.md); neither enters a config digest."""

from __future__ import annotations

from pydantic import Field, StrictBool, field_validator

from eval_harness.config.strict_block import Block


class CacheBlock(Block):
    """``cache``: the model-call cache of API runners and LLM judges."""

    enabled: StrictBool = Field(True, description="false: every call is made (as --no-cache).")
    dir: str | None = Field(None, description="Cache directory (default: $XDG_CACHE_HOME/"
                            "eval_harness or ~/.cache/eval_harness); relative to the config.")
    expire: str | float | None = Field(None, description="Entries older than this are not "
                                       "used: 7d, 12h, 30m, 90s or seconds (default: never).")

    @field_validator("expire")
    @classmethod
    def _expire(cls, value: str | float | None) -> str | float | None:
        if value is not None:
            from eval_harness._util.durations import parse_duration

            parse_duration(value)  # ValueError -> a ConfigError at cache.expire
        return value


class PriceBlock(Block):
    """One model's prices, USD per 1M tokens."""

    input: float = Field(ge=0, description="Uncached input tokens.")
    output: float = Field(ge=0, description="Output tokens.")
    cache_read: float | None = Field(None, ge=0, description="Cache-read input tokens "
                                     "(default: the input price).")
    cache_write: float | None = Field(None, ge=0, description="Cache-write input tokens "
                                      "(default: the input price).")

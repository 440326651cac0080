"""LLM judge machinery: providers over stdlib HTTP, fenced prompts, validated verdicts."""

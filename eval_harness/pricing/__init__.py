"""Model prices: the shipped table (``prices.json``), per-model overrides, and call costs."""

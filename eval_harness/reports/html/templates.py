"""The HTML page skeleton: Content-Security-Policy, CSS (light and dark), no scripts.

The CSP forbids everything by default: no scripts, no fetches, no fonts, no frames;
inline styles only (our own stylesheet and matplotlib's SVG style attributes) and
``data:`` images. The page therefore works from ``file://`` and cannot phone home even
if a user-supplied string slipped past escaping.
"""

from __future__ import annotations

import html

CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
       "form-action 'none'")

CSS = """
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1f2328; --muted: #59636e;
  --line: #d1d9e0; --head: #f6f8fa; --grid: #d8dee4; --good: #1a7f37; --bad: #cf222e;
  --warn: #9a6700; --accent: #0969da; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --head: #151b23;
    --grid: #30363d; --good: #3fb950; --bad: #f85149; --warn: #d29922; --accent: #4493f8; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1180px; padding: 24px; background: var(--bg); color: var(--fg);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
h1 { font-size: 1.6em; margin: 0 0 4px; } h2 { font-size: 1.25em; margin: 28px 0 8px;
  border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 1.05em; margin: 18px 0 6px; }
.muted, .note { color: var(--muted); } .note { margin: 4px 0; font-size: 0.92em; }
nav a { margin-right: 12px; color: var(--accent); text-decoration: none; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; margin: 6px 0; font-size: 0.92em; }
th, td { border: 1px solid var(--line); padding: 3px 8px; vertical-align: top; }
th { background: var(--head); text-align: left; white-space: nowrap; }
td.r { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.v-regressed, .v-FAIL, .v-failed { color: var(--bad); font-weight: 600; }
.v-improved, .v-PASS, .v-passed { color: var(--good); font-weight: 600; }
.v-yes { font-weight: 600; } .v-flaky { color: var(--warn); font-weight: 600; }
.v-mixed, .v-cases-regressed { color: var(--warn); font-weight: 600; }
.headline li { margin: 2px 0; }
svg.chart { max-width: 100%; height: auto; display: block; margin: 8px 0; color: var(--fg); }
details { border: 1px solid var(--line); border-radius: 6px; padding: 4px 10px; margin: 6px 0; }
summary { cursor: pointer; font-weight: 600; }
details.trace-step, p.trace-step { margin: 2px 0 2px 14px; font-size: 0.92em; }
pre { white-space: pre-wrap; word-break: break-word; background: var(--head); padding: 8px;
  border-radius: 6px; margin: 4px 0; font-size: 0.88em; max-height: 22em; overflow: auto; }
.na { color: var(--muted); font-style: italic; }
footer { margin-top: 32px; color: var(--muted); font-size: 0.85em; }
"""


def page(title: str, body: str) -> str:
    """The whole document; ``title`` is escaped here, ``body`` must already be safe HTML."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"referrer\" content=\"no-referrer\">\n"
        f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"{body}\n</body>\n</html>\n"
    )

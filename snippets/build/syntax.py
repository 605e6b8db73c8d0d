"""The page syntax the build reads, written once: front matter, fences, code, comments and `{{ }}`.

The `{{ }}` Markdown extension (`snippets.build.computed`) and the prose scanner (`snippets.build.drift`) read the
same source: each takes its patterns from here, so what one treats as code, a comment or a computed value the
other does too.
"""

from __future__ import annotations

import re

FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}).*?^(?P=indent)?[ \t]*(?P=fence)[ \t]*$", re.S | re.M)
"""A fenced block, exec blocks included."""
EXEC_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})\s*(?:python|py)\b[^\n]*\bexec=\"(?:on|true|1)\"", re.M)
"""The opening line of a `python exec="on"` block."""
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)

VALUE = r"\{\{\s*(?!claim\s)(?!/claim)(?P<expr>[^{}]+?)\s*\}\}"
"""`{{ expr }}`: a computed value (the inline pattern's regex)."""
CLAIM = r"(?s)\{\{\s*claim\s+(?P<expr>[^{}]+?)\s*\}\}(?P<words>.+?)\{\{\s*/claim\s*\}\}"
"""`{{ claim expr }}words{{ /claim }}`: a checked claim (the inline pattern's regex)."""
OPENING = re.compile(r"\{\{\s*(?P<claim>claim\s+)?(?P<expr>[^{}]+?)\s*\}\}")
"""Any opening `{{ ... }}`, a value or a claim's (`{{ /claim }}` too): where each occurs in a page."""
ANY_COMPUTED = re.compile(r"\{\{.*?\}\}", re.S)
"""Anything between `{{` and `}}`, which prose never shows as typed."""

"""Reading the project's Rust sources for the repository checks (tests/test_stats_paths.py, test_import_graph.py):
tokens without comments, the items under `#[cfg(test)]` left out, and the files of test-only modules."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
_TOKEN = re.compile(r"""//[^\n]*|/\*.*?\*/|r(\#*)"(?P<raw>.*?)"\1|b?"(?P<str>(?:[^"\\]|\\.)*)"|"""
                    r"""'(?:\\.|\\x..|\\u\{[0-9a-fA-F]+\}|[^'\\])'|(?P<word>\#\[cfg\(test\)\]|\w+)|"""
                    r"""(?P<punct>::|[{};,*])""", re.S)


def tokens(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, line) of the string literals, words and the punctuation that matters here (braces, `;`, `,`,
    `::`, `*`) of Rust source; comments and char literals are skipped."""
    out = []
    for m in _TOKEN.finditer(text):
        kind = next((k for k in ("raw", "str", "word", "punct") if m.group(k) is not None), None)
        if kind is not None:
            out.append(("str" if kind == "raw" else kind, m.group(kind), text.count("\n", 0, m.start()) + 1))
    return out


def without_test_items(toks: list[tuple[str, str, int]]) -> tuple[list, set[str]]:
    """The tokens outside `#[cfg(test)]` items, and the files of the test-only modules they declare (`tests.rs`, or
    `/x_tests.rs` for a `#[path = "x_tests.rs"]`, which sits beside the declaring file)."""
    kept, test_modules, i = [], set(), 0
    while i < len(toks):
        if toks[i][1] != "#[cfg(test)]":
            kept.append(toks[i])
            i += 1
            continue
        j = i + 1
        while j < len(toks) and toks[j][1] not in "{;":
            j += 1
        if j < len(toks) and toks[j][1] == ";" and toks[j - 2][1] == "mod":
            named = [t for k, t, _ in toks[i + 1:j] if k == "str"]
            test_modules.add("/" + named[0] if named else toks[j - 1][1] + ".rs")
        elif j < len(toks) and toks[j][1] == "{":
            depth = 1
            while depth and j + 1 < len(toks):
                j += 1
                depth += {"{": 1, "}": -1}.get(toks[j][1], 0) if toks[j][0] == "punct" else 0
        i = j + 1
    return kept, test_modules


def crate_sources(src: pathlib.Path) -> dict[pathlib.Path, list[tuple[str, str, int]]]:
    """Every non-test file of a crate's `src` folder and its non-test tokens."""
    parsed, test_files = {}, set()
    for path in sorted(src.rglob("*.rs")):
        kept, test_modules = without_test_items(tokens(path.read_text()))
        parsed[path] = kept
        # A module file sits beside mod.rs/lib.rs or in a folder named after its file; a #[path] beside its file.
        here = path.parent if path.name in ("mod.rs", "lib.rs", "main.rs") else path.with_suffix("")
        for m in test_modules:
            test_files |= {path.parent / m[1:]} if m.startswith("/") else \
                {here / m, here / m.removesuffix(".rs") / "mod.rs"}
    return {p: t for p, t in parsed.items() if p not in test_files}


def crate_source_dirs() -> list[pathlib.Path]:
    """The `src` folders of the workspace's crates."""
    return sorted(p.parent / "src" for p in (ROOT / "models").rglob("Cargo.toml") if (p.parent / "src").is_dir())

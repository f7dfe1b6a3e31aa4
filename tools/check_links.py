#!/usr/bin/env python3
"""Checks the documentation: every relative link and #anchor in every
tracked Markdown file resolves (anchors by GitHub's rules), the README
stays short, its quick starts are the ones the tests run, and the code's
messages and comments name docs/ files that exist, not README headings.

Usage: python3 tools/check_links.py [ROOT]   (exit status 1 on any failure)

Anchors follow GitHub: the heading's text, lower-cased, with everything
but letters, digits, '_', '-' and spaces removed, spaces turned into '-',
and '-1', '-2', ... added to repeated ones.  Links inside code (fenced
blocks and `spans`) are not links and are skipped.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

README_MAX_LINES = 200
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^()\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ID = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")
FENCE = re.compile(r"^\s*(```|~~~)")


def slug(heading):
    """GitHub's anchor for a heading's Markdown text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def prose_lines(text):
    """(line number, line) outside fenced code blocks, inline code blanked."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif m.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield n, re.sub(r"`[^`]*`", "``", line)


def headings_raw(path):
    """Headings with their inline code kept, for slugs (prose_lines blanks it)."""
    fence, out = None, []
    for line in path.read_text(encoding="utf-8").split("\n"):
        m = FENCE.match(line)
        if m:
            fence = m.group(1) if fence is None else (None if m.group(1) == fence else fence)
            continue
        if fence is None and HEADING.match(line):
            out.append(line)
    return out


def markdown_files(root):
    try:
        names = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "*.md"],
                               capture_output=True, check=True).stdout.decode().split("\0")
        return sorted(root / n for n in names if n)
    except (OSError, subprocess.CalledProcessError):
        return sorted(p for p in root.rglob("*.md")
                      if not any(part.startswith(".") or part in ("build", "out")
                                 for part in p.relative_to(root).parts))


def check_links(root, files):
    errors = []
    for md in files:
        text = md.read_text(encoding="utf-8")
        for n, line in prose_lines(text):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                    continue  # http:, https:, mailto:
                path, _, frag = target.partition("#")
                dest = (md.parent / path).resolve() if path else md
                where = f"{md.relative_to(root)}:{n}: {target}"
                if not dest.exists():
                    errors.append(f"{where}: no such file")
                elif frag and dest.suffix == ".md" and frag not in anchors(dest):
                    errors.append(f"{where}: no heading #{frag} in {dest.relative_to(root)}")
    return errors


def anchors(path, cache={}):
    """The anchors a Markdown file offers: its headings' slugs and HTML ids."""
    if path not in cache:
        seen, found = {}, set()
        for _, line in prose_lines(path.read_text(encoding="utf-8")):
            found.update(HTML_ID.findall(line))
        for line in headings_raw(path):
            base = slug(HEADING.match(line).group(2))
            k = seen.get(base, 0)
            seen[base] = k + 1
            found.add(base if k == 0 else f"{base}-{k}")
        cache[path] = found
    return cache[path]


DOC_PATH = re.compile(r"\bdocs/[\w./-]*\w\.md\b")
README_HEADING = re.compile(r"README'?s?,?\s+\\?\"|README.{0,12}section")


def check_code_references(root):
    """Messages and comments point at docs/ files that exist, never at a
    README heading, which the next edit of the README would break."""
    try:
        names = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True,
                               check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        return []
    errors = []
    for name in names:
        path = root / name
        if not name or path.suffix == ".md" or name.startswith(("fuzz/corpus/", "tools/check_links")) \
                or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.split("\n"), 1):
            for ref in DOC_PATH.findall(line):
                if not (root / ref).exists():
                    errors.append(f"{name}:{n}: {ref}: no such file")
            if README_HEADING.search(line):
                errors.append(f"{name}:{n}: points at a README heading; name a docs/ path")
    return errors


def code_blocks(text, lang):
    return re.findall(r"^```" + lang + r"\n(.*?)^```", text, re.S | re.M)


def check_readme(root):
    errors = []
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    lines = text.count("\n")
    if lines > README_MAX_LINES:
        errors.append(f"README.md: {lines} lines, more than {README_MAX_LINES}")
    # The C quick start is examples/quickstart.c, which script_install
    # builds and runs against an installed rmadht.
    example = (root / "examples" / "quickstart.c").read_text(encoding="utf-8")
    c_blocks = code_blocks(text, "c")
    if example not in c_blocks:
        errors.append("README.md: no ```c block is exactly examples/quickstart.c "
                      "(the tested quick start)")
    # The Python quick start is run as printed by this test.
    runner = root / "tests" / "python" / "examples" / "test_readme_example.py"
    py = [b for b in code_blocks(text, "python") if "def slow" in b]
    if len(py) != 1:
        errors.append(f"README.md: {len(py)} ```python blocks with 'def slow'; "
                      f"{runner.relative_to(root)} runs exactly one")
    if not runner.exists() or "README.md" not in runner.read_text(encoding="utf-8"):
        errors.append(f"{runner.relative_to(root)}: missing, or no longer reads README.md")
    return errors


def self_test():
    cases = {
        "The node-local path": "the-node-local-path",
        "`rtsim run`": "rtsim-run",
        "What differs from POET's `DHT.c`, and why": "what-differs-from-poets-dhtc-and-why",
        "Design: slots & [placement](x.md)": "design-slots--placement",
        "Lübke et al. 2024": "lübke-et-al-2024",
    }
    return [f"slug({h!r}) = {slug(h)!r}, GitHub gives {want!r}"
            for h, want in cases.items() if slug(h) != want]


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else
                Path(__file__).resolve().parents[1]).resolve()
    files = markdown_files(root)
    errors = (self_test() + check_links(root, files) + check_readme(root)
              + check_code_references(root))
    for e in errors:
        print(e)
    print(f"check_links: {len(files)} Markdown files, "
          f"{'no failures' if not errors else f'{len(errors)} failure(s)'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

"""The progress report: a live bar on a terminal, a few plain lines in a log."""

import io

import pytest

from rtsim.cli import build_parser
from rtsim.progress import Progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def _run(progress, iterations):
    for it in range(1, iterations + 1):
        progress.update(it, 1000.0, 0.5, None)
    progress.finish()


@pytest.mark.parametrize("iterations", [1, 3, 10, 97, 2000])
def test_a_log_gets_a_line_per_tenth_and_no_carriage_return(iterations):
    out = io.StringIO()
    _run(Progress(iterations, enabled=True, stream=out), iterations)
    text = out.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert text.endswith("\n")
    assert len(lines) == min(iterations, 10)
    assert f"it {iterations}/{iterations}" in lines[-1]
    assert "hit  50.0%" in lines[-1]


def test_a_terminal_gets_one_bar_redrawn_in_place():
    out = Terminal()
    _run(Progress(50, enabled=True, stream=out), 50)
    text = out.getvalue()
    assert text.count("\r") == 50
    assert text.count("\n") == 1 and text.endswith("\n")
    assert "it 50/50" in text.rsplit("\r", 1)[-1]


@pytest.mark.parametrize("live, stream, redraws", [(False, Terminal, 0), (True, io.StringIO, 20)])
def test_the_style_can_be_chosen(live, stream, redraws):
    out = stream()
    _run(Progress(20, enabled=True, stream=out, live=live), 20)
    assert out.getvalue().count("\r") == redraws
    assert out.getvalue().count("\n") == (1 if live else 10)


def test_disabled_writes_nothing():
    out = Terminal()
    _run(Progress(20, enabled=False, stream=out), 20)
    assert out.getvalue() == ""


def test_command_line_style():
    def parse(*extra):
        return build_parser().parse_args(["run", "s.toml", "out", *extra])

    args = parse("--progress")
    assert args.progress and args.progress_style == "auto"
    assert parse("--progress", "--progress-style", "lines").progress_style == "lines"
    assert not parse().progress
    with pytest.raises(SystemExit):
        parse("--progress-style", "fancy")

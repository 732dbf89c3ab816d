"""The user docs stay true to the code: every command in the README's and the guide's code blocks parses with
the command line's own parser, every relative link points at a file (and heading) that exists, and every
section of docs/method.md that the code cites is there; ARCHITECTURE's layout and its claim about the tests, and
BENCHES' table of benches, match the tree."""

from __future__ import annotations

import contextlib
import io
import itertools
import re
import shlex
from pathlib import Path

import pytest

from rredcot_viz.cli import build_parser, chosen_command

ROOT = Path(__file__).resolve().parents[1]
COMMAND_DOCS = [ROOT / "README.md", ROOT / "docs" / "guide.md"]
LINKED_DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CLI_PREFIXES = ("python -m rredcot_viz", "rredcot-viz", "rredcot")
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def code_blocks(path: Path) -> list[str]:
    return FENCE.findall(path.read_text(encoding="utf-8"))


def logical_lines(block: str) -> list[str]:
    """Lines with backslash continuations joined."""
    return block.replace("\\\n", " ").splitlines()


def cli_arguments(line: str) -> list[str] | None:
    """The words after the program name when ``line`` runs the command line, else None. Comments are dropped;
    a launcher in front (``accelerate launch ... -m rredcot_viz``, ``torch.distributed.run``) is skipped."""
    if not re.search(r"-m rredcot_viz\b|^\s*rredcot(-viz)? ", line):
        return None
    words = shlex.split(line, comments=True)
    for index, word in enumerate(words):
        if word == "-m" and index + 1 < len(words) and words[index + 1] == "rredcot_viz":
            return words[index + 2 :]
        if index == 0 and word in ("rredcot-viz", "rredcot"):
            return words[1:]
    return None


def documented_commands() -> list[tuple[str, list[str]]]:
    found = []
    for path in COMMAND_DOCS:
        for block in code_blocks(path):
            for line in logical_lines(block):
                arguments = cli_arguments(line)
                if arguments is not None and not re.search(r"<\w|\[--", line):  # <placeholder>, [--usage]
                    found.append((f"{path.name}: {line.strip()}", arguments))
    return found


COMMANDS = documented_commands()


def test_the_docs_show_commands_for_every_part_of_the_command_line():
    used = {chosen_command(arguments) for _, arguments in COMMANDS}
    assert len(COMMANDS) >= 30
    assert {"analyze", "compare", "import", "train", "eval-diagnosis", "resample", "report", "export"} <= used


@pytest.mark.parametrize("arguments", [arguments for _, arguments in COMMANDS], ids=[name for name, _ in COMMANDS])
def test_a_documented_command_parses(arguments):
    """Parsed, not run: argparse accepts the subcommand and every option (``--help`` exits 0 by design)."""
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
        try:
            build_parser(chosen_command(arguments)).parse_args(arguments)
        except SystemExit as stop:
            assert stop.code == 0 and "--help" in arguments, errors.getvalue()


def test_a_wrong_option_is_caught():
    """The check above can fail: a misspelt option is refused by the same parse."""
    with contextlib.redirect_stderr(io.StringIO()), pytest.raises(SystemExit):
        build_parser("analyze").parse_args(["analyze", "x.jsonl", "--segmentr", "hybrid"])
    assert cli_arguments("OMP_NUM_THREADS=1 python -m torch.distributed.run -m rredcot_viz import f --limit 2") == [
        "import",
        "f",
        "--limit",
        "2",
    ]


def heading_anchors(path: Path) -> set[str]:
    """GitHub's anchors for the headings of a Markdown file (ASCII headings; code blocks skipped)."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    anchors = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", text, re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.lower().replace("`", "")).replace(" ", "-")
        anchors.add(slug)
    return anchors


def relative_links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)  # code spans are not links
    return [target for target in LINK.findall(text) if not re.match(r"[a-z]+:", target)]


@pytest.mark.parametrize("path", LINKED_DOCS, ids=lambda path: path.name)
def test_relative_links_point_at_what_exists(path):
    broken = []
    for target in relative_links(path):
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists() or (anchor and linked.suffix == ".md" and anchor not in heading_anchors(linked)):
            broken.append(target)
    assert not broken, f"{path.name}: broken links {broken}"


def test_the_readme_is_short_and_keeps_the_two_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 160
    assert "scripts/dev app     # fresh machine" in readme and "scripts/dev test    # fresh machine" in readme


def method_sections() -> set[str]:
    text = (ROOT / "docs" / "method.md").read_text(encoding="utf-8")
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", text, re.MULTILINE))


def test_every_section_the_code_cites_is_in_method_md():
    cited = set()
    for folder in ("rredcot_viz", "tests", "bench", "scripts"):
        for source in (ROOT / folder).rglob("*.py"):
            text = source.read_text(encoding="utf-8")
            cited |= set(re.findall(r"(?:METHOD|method)\.md §(\d+(?:\.\d+)?)", text))
    assert {"0.2", "2.2", "5", "8.2"} <= cited
    assert not cited - method_sections(), f"cited but missing from docs/method.md: {sorted(cited - method_sections())}"


# ---------------------------------------------------------------------------------------------- ARCHITECTURE.md
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
TESTS_ELSEWHERE = {"app": "pages"}  # the app's screens are tested as pages (tests/pages/), where they ran before


def architecture_section(title: str) -> str:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def library_entries() -> set[str]:
    """The library's packages (``name/``) and top-level modules (``name.py``), as the layout lists them."""
    root = ROOT / "rredcot_viz"
    packages = {f"{p.name}/" for p in root.iterdir() if p.is_dir() and any(p.glob("*.py"))}
    modules = {p.name for p in root.glob("*.py") if p.stem not in ("__init__", "__main__")}
    return packages | modules


def test_where_things_are_names_every_package_and_module_of_the_library():
    """ARCHITECTURE's layout block names each package and top-level module of rredcot_viz, and nothing else: an
    entry line starts two spaces in with the name (a line of modules lists several ``name.py``)."""
    block = FENCE.findall(architecture_section("Where things are"))[0]
    library = block.split("rredcot_viz/ ", 1)[1].split("\nrredcot_viz/sample_traces/", 1)[0]
    named = set()
    for line in library.splitlines():
        if line.startswith("  ") and not line.startswith("   "):
            words = line.split()
            named |= set(itertools.takewhile(lambda w: w.endswith(".py"), words)) or {words[0]}
    assert named == library_entries()


def test_tests_mirror_the_package_folders_and_most_modules_have_their_own_file():
    """ARCHITECTURE's 'Tests': a tests/ folder per package, and most modules (over half) a test_<module>.py."""
    packages = [name.rstrip("/") for name in library_entries() if name.endswith("/")]
    missing = [p for p in packages if not (ROOT / "tests" / TESTS_ELSEWHERE.get(p, p)).is_dir()]
    assert not missing, f"packages without a tests/ folder of their own: {missing}"
    modules = [p for p in (ROOT / "rredcot_viz").rglob("*.py") if p.stem not in ("__init__", "__main__")]
    tested = {p.stem for p in (ROOT / "tests").rglob("test_*.py")}
    share = sum(f"test_{p.stem}" in tested for p in modules) / len(modules)
    assert share > 0.5, f"only {share:.0%} of the modules have a test file named after them ('most' in the doc)"


def test_every_bench_named_in_benches_md_exists_and_every_bench_is_named():
    """docs/BENCHES.md's table has a row per bench script, and each row's script exists."""
    text = (ROOT / "docs" / "BENCHES.md").read_text(encoding="utf-8")
    named = set(re.findall(r"\[`bench/(\w+)\.py", text))
    scripts = {p.stem for p in (ROOT / "bench").glob("*.py")} - {"workers"}  # workers: not a bench (said there)
    assert named == scripts

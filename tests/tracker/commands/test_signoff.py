"""``tracker signoff`` (tracker/commands/signoff.py): what may be signed off."""

from __future__ import annotations


def test_the_template_s_placeholder_gate_cannot_be_signed_off(repo, cli) -> None:
    # issue 24: the untouched `tracker new` plan could be signed off, and its phase was then done
    root = repo({"a.py": "A = 1\n"})
    assert cli(root, "new", "Parser rewrite").code == 0
    r = cli(root, "signoff", "0001/P1", "--gate", "1", "--by", "me", "--why", "looks fine")
    assert r.code == 3 and "Traceback" not in r.err
    assert r.err == (
        "tracker: error: gate 1 of 0001/P1 is still the template's placeholder: edit it in "
        "plans/0001-parser-rewrite.md to say what a reviewer must confirm, then sign it off\n"
    )
    assert not (root / ".tracker/evidence").exists() or not any((root / ".tracker/evidence").iterdir())
    path = root / "plans/0001-parser-rewrite.md"
    path.write_text(path.read_text().replace("Describe what a reviewer must confirm before this phase counts as done",
                                             "The grammar reviewed"))  # fmt: skip
    assert cli(root, "signoff", "0001/P1", "--gate", "1", "--by", "me", "--why", "read it").code == 0


def test_the_template_holds_the_placeholder_the_checks_know() -> None:
    from tracker.commands.new import template_path
    from tracker.core.checks import TEMPLATE_MANUAL

    assert f'manual = "{TEMPLATE_MANUAL}"' in template_path().read_text()


# The placeholder as someone might touch it without saying anything: a period, case, spacing, quotes, markup.
PLACEHOLDER_TOUCHED = [
    "Describe what a reviewer must confirm before this phase counts as done.",
    "describe what a reviewer must confirm before this phase counts as done!",
    "  Describe  what a reviewer must\\tconfirm before this phase counts as done ... ",
    "*Describe what a reviewer must confirm before this phase counts as done*",
    "“Describe what a reviewer must confirm, before this phase counts as done”",
    "Ｄescribe what a reviewer must confirm before this phase counts as done",
    "Desc\u200bribe what a reviewer must confirm before this phase counts as done",  # adv: a zero-width space
    "Describe what a re\u00adviewer must confirm before this phase counts\u2060 as done",  # a soft hyphen, a joiner
]


def test_the_placeholder_gate_touched_but_not_edited_cannot_be_signed_off(repo, cli) -> None:  # type: ignore[no-untyped-def]
    """Adversarial review L1: a period added to the placeholder got past signoff (an exact-text match)."""
    from tracker.core.checks import TEMPLATE_MANUAL

    root = repo({"a.py": "A = 1\n"})
    assert cli(root, "new", "Parser rewrite").code == 0
    path = root / "plans/0001-parser-rewrite.md"
    template = path.read_text()
    for touched in PLACEHOLDER_TOUCHED:
        path.write_text(template.replace(TEMPLATE_MANUAL, touched))
        r = cli(root, "signoff", "0001/P1", "--gate", "1", "--by", "me", "--why", "looks fine")
        assert r.code == 3 and "still the template's placeholder" in r.err, (touched, r.err)

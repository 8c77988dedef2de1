"""docs/benchmarks.md is generated from benchmarks/results/*.json (``python -m benchmarks.docs``) and current."""
from benchmarks import docs


def test_docs_benchmarks_md_is_current():
    assert docs.DOC.read_text(encoding="utf-8") == docs.render(), "run python -m benchmarks.docs"


def test_every_results_file_is_in_the_harness_format_and_shown():
    text = docs.render()
    for path in sorted(docs.RESULTS.glob("*.json")):
        assert f'<a id="{path.stem}"></a>' in text

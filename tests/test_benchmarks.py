"""The benchmarks' code runs against the engine as it is. It reaches into the engine (a search's
passages are timed through `GrasBot._with_passages`), so a signature changed there broke
`benchmarks/run.py` unseen until the next measure (round 46). No figure is asserted: what a
measure takes is the benchmark's to write down, never a test's."""

from __future__ import annotations

from support.scripts import load_script


def _benchmark():
    return load_script("benchmarks/run.py")


def test_the_benchmark_measures_search_with_meaning_on_the_bundled_vault(tmp_path):
    out = _benchmark().measure_semantic(41, tmp_path, 40)
    assert out["search_questions"] == 20  # the first 20 warm the engine, the other 20 are timed
    assert out["passages_questions"] > 0  # some grounded: their passages chosen with meaning and without
    timed = ("search_p50_ms", "search_embed_p50_ms", "embed_alone_p50_ms", "search_known_p50_ms", "passages_meaning_p50_ms", "passages_words_p50_ms")
    assert all(out[key] > 0 for key in timed), {key: out[key] for key in timed}
    assert (tmp_path / "semantic-cache-41").is_dir()  # its vectors written where it was told, not in the home's cache

"""The external study: selection and Jaccard on the mirrored sets."""


from toolgate.external import adapters as A
from toolgate.external import study as X

BM25 = {"bm25": {"type": "bm25", "variant": "E1"}}


def test_selection_and_jaccard_on_mirror(fc_single, run0):
    sets = {"functionchat_singlecall": fc_single}
    sel = X.external_selection(BM25, sets, run0)
    assert list(sel["condition"]) == list(A.SINGLECALL_CONDITIONS) and (sel["n"] == 100).all()
    assert sel.set_index("condition").loc["exact", "top1"] == 1.0
    summary, items = X.jaccard_external(sets, 3)
    assert len(items) == 100 and summary.iloc[0]["n"] == 100 and summary.iloc[0]["lang"] == "ko"
    assert 0 <= summary.iloc[0]["q1"] <= summary.iloc[0]["median"] <= summary.iloc[0]["q3"] <= 1

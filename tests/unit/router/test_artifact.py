"""router.artifact: the embeddings archive is the same bytes for the same arrays and reads back as written."""
import io

import numpy as np

from toolgate.router.artifact import npz_bytes


def test_embeddings_archive_is_deterministic_and_round_trips():
    arrays = {"catalog__e5": np.arange(6, dtype=np.float32).reshape(2, 3), "exemplars__e5": np.zeros((0, 3))}
    first, second = npz_bytes(arrays), npz_bytes(dict(reversed(list(arrays.items()))))
    assert first == second
    back = dict(np.load(io.BytesIO(first)))
    assert set(back) == set(arrays) and back["catalog__e5"].dtype == np.float32
    assert np.array_equal(back["catalog__e5"], arrays["catalog__e5"]) and back["exemplars__e5"].shape == (0, 3)

"""The numpy array types the built-in engine's modules hand each other.

Stored postings hold two-byte doc ids (`segmented_ids`) and the narrowest weight
type that is exact (uint8 counts, mostly); ids read at query time are int32 or
int64, and scores are always float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

DocIds = npt.NDArray[np.signedinteger[Any]]
Floats = npt.NDArray[np.float64]
Weights = npt.NDArray[np.floating[Any] | np.unsignedinteger[Any]]
Mask = npt.NDArray[np.bool_]

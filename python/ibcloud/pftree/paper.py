"""The numbers seed 002 prints for its ORCS experiments (E §3.1.3–3.2), with
Table 4's node labels read as 128/192/256 (E §3.4).

>>> TABLE4[(128, "gather")]["ext"]
(31, 31, 31)
>>> len(TABLE3)
9
"""

from __future__ import annotations

from typing import Dict, Tuple

__all__ = ["TABLE3", "TABLE4", "FIG10", "FIG11", "FIG13_15"]

#: (nodes, m1, m2, w2): XGFT(2; m1, m2; 1, w2), victims = nodes / 4.
TABLE3 = [
    (32, 8, 4, 4), (48, 12, 4, 4), (64, 16, 4, 4),
    (128, 16, 8, 8), (192, 24, 8, 8), (256, 32, 8, 8),
    (512, 32, 16, 16), (768, 48, 16, 16), (1024, 64, 16, 16),
]

#: (nodes, victim pattern) -> {"pftree": (min, avg, max), "ext": (min, avg, max)}; alltoall noise.
TABLE4: Dict[Tuple[int, str], Dict[str, Tuple[float, float, float]]] = {
    (128, "bisect"): {"pftree": (1, 99.9, 111), "ext": (1, 2, 4)},
    (128, "bisect_fb_sym"): {"pftree": (61, 106.6, 112), "ext": (1, 2.6, 4)},
    (128, "gather"): {"pftree": (31, 66.2, 112), "ext": (31, 31, 31)},
    (128, "scatter"): {"pftree": (0, 29.2, 113), "ext": (0, 15.6, 31)},
    (128, "alltoall"): {"pftree": (96, 122.4, 128), "ext": (30, 30, 30)},
    (192, "bisect"): {"pftree": (126, 275.8, 291), "ext": (1, 2.2, 5)},
    (192, "bisect_fb_sym"): {"pftree": (251, 284.5, 293), "ext": (2, 2.9, 5)},
    (192, "gather"): {"pftree": (78, 204.8, 294), "ext": (47, 47, 47)},
    (192, "scatter"): {"pftree": (0, 80.5, 293), "ext": (0, 26.8, 47)},
    (192, "alltoall"): {"pftree": (291, 309.8, 318), "ext": (46, 46, 46)},
    (256, "bisect"): {"pftree": (241, 509.3, 649), "ext": (1, 2.5, 4)},
    (256, "bisect_fb_sym"): {"pftree": (386, 551.9, 649), "ext": (3, 3.6, 6)},
    (256, "gather"): {"pftree": (80, 254.9, 560), "ext": (63, 63, 63)},
    (256, "scatter"): {"pftree": (0, 131.3, 442), "ext": (0, 34, 63)},
    (256, "alltoall"): {"pftree": (480, 593.3, 656), "ext": (110, 111.2, 112)},
}

#: Values Fig. 10's prose quotes (alltoall noise unless said).
FIG10 = {
    "bisect_pftree_max_1024_4to1": 2498,
    "gather_pftree_512_2to1": (127, 152),
    "gather_pftree_1024_4to1": (255, 1696),
    "alltoall_ext_gain_noiseless": 0.50,
}

#: Fig. 11 (EBB of the interfering partition running bisect, victims idle).
FIG11 = {
    "pftree_small_2to1": 0.76, "pftree_small_4to1": 0.62,
    "ext_small_2to1": 0.62, "ext_small_3to1": 0.37,
    "ext_share_min_1024_4to1": 0.233, "ext_share_2to1_at_least": 0.70,
}

#: Figs. 13-15 (pFTree-Wt vs pFTree): what the prose quotes.
FIG13_15 = {
    "wt_down_contention": 0,
    "pftree_down_contention_avg_32": 2, "pftree_down_contention_avg_1024": 8.6,
    "pftree_up_contention_excess_768": 0.107, "pftree_up_contention_excess_1024": 0.1464,
    "interference_32_pftree": 192, "interference_32_wt": 293,
    "interference_increase_1024": 0.8676,
}

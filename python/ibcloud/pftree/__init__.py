"""Seed 002's pFTree experiments: the paper's numbers (:mod:`.paper`) and
``ibcloud reproduce pftree`` (:mod:`.reproduction`). The engines, partition
files and analyses themselves are in :mod:`ibcloud.partitions`.

>>> from ibcloud.pftree import paper
>>> paper.TABLE3[0]
(32, 8, 4, 4)
"""

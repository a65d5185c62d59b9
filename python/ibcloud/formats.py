"""The file formats that hold a whole fabric, and how names map to them.

=================  =========  ====  =====
format             extension  read  write
=================  =========  ====  =====
``native``         ``.ibcf``  yes   yes
``ibnetdiscover``  ``.topo``  yes   yes
``ibsim``          ``.net``   yes   yes
``subnet-lst``     ``.lst``   yes   no
=================  =========  ====  =====

>>> [f["name"] for f in formats() if f["can_write"]]
['native', 'ibnetdiscover', 'ibsim']
"""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Union

from ibcloud import _native

__all__ = ["formats", "format_name", "guess_format"]


def formats() -> List[Dict[str, object]]:
    """Every fabric format: its ``name``, usual ``extension`` and ``can_write``.

    >>> formats()[0]
    {'name': 'native', 'extension': 'ibcf', 'can_write': True}
    """
    return _native.formats()


def format_name(name: str) -> str:
    """The canonical name of a format given by name or extension.

    Raises :class:`~ibcloud.exceptions.UnsupportedError` for unknown names.

    >>> format_name("net"), format_name("IBNETDISCOVER")
    ('ibsim', 'ibnetdiscover')
    """
    return _native.format_name(name)


def guess_format(path: Union[str, "os.PathLike[str]"]) -> Optional[str]:
    """The format a file name implies, or None when the name says nothing.

    >>> guess_format("fabric.topo"), guess_format("out/ft648.net"), guess_format("notes.txt")
    ('ibnetdiscover', 'ibsim', None)
    """
    return _native.format_from_path(os.fspath(path))

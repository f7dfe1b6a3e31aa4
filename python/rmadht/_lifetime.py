"""What Table and SurrogateCache share about their lifetime: a collective
close, use as a context manager, and a warning instead of a free when the
garbage collector finds one still open."""

from __future__ import annotations

import warnings
from typing import Any


class CollectiveHandle:
    """Base of objects that own a C handle ``self._h`` freed collectively."""

    _h: Any

    def close(self) -> None:
        """Collective: completes pending writes and frees the object on
        every rank.  Closing twice does nothing."""
        self._h.close()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has run."""
        return self._h.closed

    def __enter__(self):
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        h = getattr(self, "_h", None)
        if h is not None and not h.closed:
            # Freeing is collective, so a destructor cannot do it.
            warnings.warn(f"rmadht.{type(self).__name__} was never closed; its "
                          "memory stays allocated until MPI_Finalize",
                          ResourceWarning, stacklevel=2)

"""name -> factory registries used for every pluggable decision."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class Registry(dict[str, Callable[..., T]]):
    """name -> factory, with a helpful error for unknown names."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def register(self, name: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
        def deco(factory: Callable[..., T]) -> Callable[..., T]:
            if name in self:
                raise ValueError(f"{self.kind} {name!r} registered twice")
            self[name] = factory
            return factory

        return deco

    def create(self, name: str, **kwargs: Any) -> T:
        try:
            factory = self[name]
        except KeyError:
            raise ValueError(f"Unknown {self.kind}: {name!r} (known: {', '.join(sorted(self))})") from None
        return factory(**kwargs)



from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Book:
    id: str
    title: str
    author: str
    archived: bool = False


class CatalogService:
    def find_available_titles(self, books: list[Book], prefix: str, include_archived: bool = False) -> list[str]:
        matches = [book.title for book in books
                   if book.title.startswith(prefix) and (include_archived or not book.archived)]
        return sorted(matches)

    def build_catalog_digest(self, books: list[Book], include_archived: bool = False) -> str:
        output = "Catalog Digest\n"
        for book in books:
            if include_archived or not book.archived:
                output += f"- {book.title} by {book.author}\n"
        return output

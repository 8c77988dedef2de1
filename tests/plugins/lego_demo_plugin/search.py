"""``mapper.search=budgeted``: the exhaustive walk, stopped after ``mapper.patience`` valid mappings."""
from __future__ import annotations

from dataclasses import dataclass

from lego_build.mapping.searches import Exhaustive, SearchKind


@dataclass
class Budgeted(Exhaustive):
    budget: int = 300

    def ask(self):
        if sum(entry["status"] == "valid" for entry in self.log) >= self.budget:
            return None
        return super().ask()


SEARCH = SearchKind("budgeted", lambda space, mapper: Budgeted(space, mapper.objective, limit=0,
                                                               budget=mapper.patience))

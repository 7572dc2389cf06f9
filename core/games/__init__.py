"""The games, one package each: its engine (``engine``) and its computer players (``players``)."""

"""11 nimmt!: the engine (``engine``) and its computer players (``players``)."""

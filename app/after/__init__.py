"""After the game: the seed commitment and replay check (:mod:`.verify`) and
the step-through replay (:mod:`.replay`)."""

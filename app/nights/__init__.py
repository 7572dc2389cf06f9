"""Game nights: the pure night (:mod:`.night`: sign-up, seating, standings)
and its host (:mod:`.host`: starts the rounds' tables, saves the night)."""

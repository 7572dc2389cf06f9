"""Tables that survive restarts: the table manager (:mod:`.manager`: draft,
save, adopt) and the computer players' driver (:mod:`.computers`)."""

"""Languages: the message catalogues (:mod:`.catalogue`) and the rules pages
(:mod:`.rules`).  Nothing here imports discord; the slash-command
translator that feeds Discord is :mod:`cogs.common.translator`."""

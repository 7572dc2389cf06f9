"""What the Discord cogs share: replies, languages and ids (:mod:`.ui`) and
the slash-command translator (:mod:`.translator`)."""

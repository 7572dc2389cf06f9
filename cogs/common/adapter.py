"""Where the bot leans on discord.py beyond its declared API, in one place.

discord.py 2.7 is what this is written against (``requirements.txt`` pins it);
tests/test_adapter.py fails when an upgrade moves what is used here.
"""
from __future__ import annotations

from typing import cast

#: the message id of an interaction's own response, for ``Webhook.edit_message``
#: through the interaction's followup webhook: Discord documents
#: ``/webhooks/{application.id}/{interaction.token}/messages/@original``; discord.py
#: declares the id an int and puts it into the path as it is.
ORIGINAL = cast(int, "@original")
